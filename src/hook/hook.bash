# agentenv shell hook (bash): eval "$(agentenv hook bash)" in ~/.bashrc
_agentenv_bin=@BIN@
@PROMPT@
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
@LOAD@
if [[ ";${PROMPT_COMMAND-};" != *";_agentenv_hook;"* ]]; then
  PROMPT_COMMAND="_agentenv_hook${PROMPT_COMMAND:+;$PROMPT_COMMAND}"
fi
