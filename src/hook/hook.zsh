# agentenv shell hook (zsh): eval "$(agentenv hook zsh)" in ~/.zshrc
typeset -g _agentenv_bin=@BIN@
typeset -ga _agentenv_watch
@PROMPT@
_agentenv_reload() {
  local _agentenv_out
  if (( $+functions[_agentenv_undo] )); then
    _agentenv_undo
    unfunction _agentenv_undo
  fi
  typeset -g _agentenv_pwd=$PWD
  _agentenv_watch=()
  if [[ ! -x "$_agentenv_bin" ]]; then
    if [[ -z "${_agentenv_missing-}" ]]; then
      printf 'agentenv: %s is missing; the hook loads nothing until it is back\n' "$_agentenv_bin" >&2
    fi
    typeset -g _agentenv_missing=1
    return 0
  fi
@LOAD@
typeset -ga precmd_functions
if (( ! ${precmd_functions[(I)_agentenv_hook]:-0} )); then
  precmd_functions=(_agentenv_hook $precmd_functions)
fi
