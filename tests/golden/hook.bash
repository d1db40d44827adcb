# agentenv shell hook (bash): eval "$(agentenv hook bash)" in ~/.bashrc
_agentenv_bin='/usr/local/bin/agentenv'
_agentenv_hook() {
  local _agentenv_rc=$? _agentenv_f
  if [[ "${_agentenv_pwd-}" == "$PWD" ]]; then
    for _agentenv_f in "${_agentenv_watch[@]}"; do
      if [[ "$_agentenv_f" -nt "$_agentenv_stamp" ]]; then
        _agentenv_reload
        return $_agentenv_rc
      fi
    done
    return $_agentenv_rc
  fi
  _agentenv_reload
  return $_agentenv_rc
}
_agentenv_unprepend() {
  local _n=$1 _had=$2 _old=$3 _ours=$4 _e _cur
  shift 4
  if [[ "${!_n-}" == "$_ours" ]]; then
    if [[ $_had == 1 ]]; then export "$_n=$_old"; else unset "$_n"; fi
    return 0
  fi
  _cur=":${!_n-}:"
  for _e in "$@"; do _cur=${_cur/":$_e:"/:}; done
  _cur=${_cur#:}; _cur=${_cur%:}
  if [[ -z $_cur && $_had != 1 ]]; then unset "$_n"; else export "$_n=$_cur"; fi
}
_agentenv_reload() {
  local _agentenv_out
  if declare -F _agentenv_undo >/dev/null; then
    _agentenv_undo
    unset -f _agentenv_undo
  fi
  _agentenv_pwd=$PWD
  _agentenv_watch=()
  if [[ ! -x "$_agentenv_bin" ]]; then
    if [[ -z "${_agentenv_missing-}" ]]; then
      printf 'agentenv: %s is missing; the hook loads nothing until it is back\n' "$_agentenv_bin" >&2
    fi
    _agentenv_missing=1
    return 0
  fi
  unset _agentenv_missing
  if _agentenv_out=$("$_agentenv_bin" hook bash --load --pid "$$" --warned "${_agentenv_warned-}" --shown "${_agentenv_shown-}"); then
    eval "$_agentenv_out"
  else
    printf 'agentenv: the hook could not load the environment (exit %s); the shell goes on without it\n' "$?" >&2
  fi
  return 0
}
if [[ ";${PROMPT_COMMAND-};" != *";_agentenv_hook;"* ]]; then
  PROMPT_COMMAND="_agentenv_hook${PROMPT_COMMAND:+;$PROMPT_COMMAND}"
fi
