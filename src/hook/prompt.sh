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
  if [[ "@GET@" == "$_ours" ]]; then
    if [[ $_had == 1 ]]; then export "$_n=$_old"; else unset "$_n"; fi
    return 0
  fi
  _cur=":@GET@:"
  for _e in "$@"; do _cur=${_cur/":$_e:"/:}; done
  _cur=${_cur#:}; _cur=${_cur%:}
  if [[ -z $_cur && $_had != 1 ]]; then unset "$_n"; else export "$_n=$_cur"; fi
}
