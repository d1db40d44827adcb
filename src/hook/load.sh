  unset _agentenv_missing
  if _agentenv_out=$("$_agentenv_bin" hook @SHELL@ --load --pid "$$" --warned "${_agentenv_warned-}" --shown "${_agentenv_shown-}"); then
    eval "$_agentenv_out"
  else
    printf 'agentenv: the hook could not load the environment (exit %s); the shell goes on without it\n' "$?" >&2
  fi
  return 0
}
