: agentenv-hook-begin: the functions of a rewritten command, no value
__agentenv_end() {
  set -- "$?"
  [ -z "${__ae_c-}" ] && return "$1"
  [ -n "${BASH_VERSION-}" ] || setopt localoptions nowarncreateglobal
  printf x >&$__ae_c
  exec >/dev/null 2>&1 {__ae_c}>&-
  unset __ae_c
  if [ -n "${__ae_q-}" ]; then
    until IFS= read -r -t 1 -u $__ae_s __ae_x; do kill -0 "$__ae_q" 2>/dev/null || break; done
  else
    IFS= read -r -u $__ae_s __ae_x
  fi
  exec {__ae_s}<&-
  unset __ae_x __ae_s __ae_q
  return "$1"
}
__agentenv_undo() {
  [ -n "${__ae_o-}" ] && [ -n "${__ae_e-}" ] && { exec 1>&$__ae_o 2>&$__ae_e; } 2>/dev/null
  [ -n "${__ae_s-}" ] && exec {__ae_s}<&-
  [ -n "${__ae_o-}" ] && exec {__ae_o}>&-
  [ -n "${__ae_e-}" ] && exec {__ae_e}>&-
  [ -n "${__ae_c-}" ] && exec {__ae_c}>&-
  [ -n "${__ae_v-}" ] && exec {__ae_v}<&-
  unset __ae_d __ae_c __ae_o __ae_e __ae_s __ae_x __ae_p __ae_i __ae_n __ae_v __ae_k __ae_q
}
__agentenv_daemon() {
  [ -n "${4-}" ] && [ -d "/proc/${4%%:*}" ] || return 1
  __ae_x=${BASHPID-}
  if [ -z "${BASH_VERSION-}" ]; then [ "${ZSH_SUBSHELL-}" = 0 ] || return 1; __ae_x=$$; fi
  __ae_p=${4#*:}
  __ae_q=${4%%:*}
  [ -d "$__ae_p" ] && [ ! -L "$__ae_p" ] && [ -O "$__ae_p" ] || return 1
  case $- in *C*) __ae_n= ;; *) __ae_n=1; set -C ;; esac
  for __ae_i in 0 1 2 3 4 5 6 7; do
    { true >"$__ae_p/$__ae_i/lock"; } 2>/dev/null && break
    __ae_i=
  done
  [ -n "$__ae_n" ] && set +C
  [ -n "$__ae_i" ] || return 1
  __ae_d=$__ae_p/$__ae_i
  [ -p "$__ae_d/c" ] || return 1
  exec {__ae_o}>&1 {__ae_e}>&2 {__ae_s}<>"$__ae_d/r" {__ae_c}<>"$__ae_d/c" || return 1
  [ -O /dev/fd/$__ae_s ] && [ -O /dev/fd/$__ae_c ] || return 1
  __ae_k=${SRANDOM-}$RANDOM$RANDOM$RANDOM
  printf '%s %s %s %s %s %s %s\n' "$__ae_x" "$__ae_o" "$__ae_e" "$__ae_c" "$__ae_k" "$2" "$3" >&$__ae_c
  IFS= read -r -t 5 -u $__ae_s __ae_x && [ "$__ae_x" = "ok $__ae_k" ] && exec {__ae_v}<"$__ae_d/v" && [ -O /dev/fd/$__ae_v ] && IFS= read -r -u $__ae_v __ae_x && [ "$__ae_x" = ": $__ae_k" ] && exec >"$__ae_d/o" 2>"$__ae_d/e" && printf o >&$__ae_c && IFS= read -r -d '' -u $__ae_v __ae_x
}
__agentenv_helper() {
  exec {__ae_o}>&1 {__ae_e}>&2 && eval 'exec {__ae_s}< <(exec "$1" hook "$2" wrap --entry "$3" 0>&1 1>&$__ae_o 2>&$__ae_e {__ae_o}>&- {__ae_e}>&-)' && IFS= read -r -u $__ae_s __ae_d && exec {__ae_c}>"$__ae_d/c" >"$__ae_d/o" 2>"$__ae_d/e" && printf o >&$__ae_c && IFS= read -r -d '' -u $__ae_s __ae_x
}
__agentenv_begin() {
  unset __ae_c __ae_s __ae_o __ae_e __ae_v __ae_q __ae_k
  if [ -z "${BASH_VERSION-}${ZSH_VERSION-}" ]; then
    printf '%s\n' 'agentenv: the shell is not bash or zsh: this command runs without the sensitive variables' >&2
    return 0
  fi
  [ -n "${BASH_VERSION-}" ] || { setopt localoptions posixtraps nowarncreateglobal; unsetopt clobberempty 2>/dev/null || :; }
  if __agentenv_daemon "$@" || { __agentenv_undo; __agentenv_helper "$@"; }; then
    [ -n "${__ae_v-}" ] && exec {__ae_v}<&-
    exec {__ae_o}>&- {__ae_e}>&-
    eval "$__ae_x"
    unset __ae_x __ae_d __ae_p __ae_i __ae_n __ae_v __ae_k __ae_o __ae_e
    trap __agentenv_end EXIT
  else
    __agentenv_undo
    printf '%s\n' 'agentenv: the sensitive variables could not be loaded for this command; it runs without them' >&2
  fi
}
: agentenv-hook-end
