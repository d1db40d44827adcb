
__da_env=env
__da_msys=
case "$OSTYPE" in msys*|cygwin*) __da_msys=1; __da_env=/usr/bin/env ;; esac
if [ -n "$__da_msys" ]; then
  for __da_n in $(compgen -e); do
    case "$__da_n" in *PATH) printf -v "__da_b_$__da_n" '%s' "${!__da_n}" ;; esac
  done
fi
"$__da_env" -0 || exit 1
set -a
source "$1" >/dev/null 2>&1 || exit 1
set +a +e +u
printf '%s\0' '@@dotagents:after@@'
"$__da_env" -0 || exit 1
IFS=$' \t\n'
if [ -n "$__da_msys" ]; then
  printf '%s\0' '@@dotagents:native@@'
  for __da_n in $(compgen -e); do
    case "$__da_n" in *PATH) ;; *) continue ;; esac
    __da_b=__da_b_$__da_n
    if [ -n "${!__da_b+x}" ] && [ "${!__da_b}" = "${!__da_n}" ]; then continue; fi
    case "${!__da_n}" in *\;*|*\\*|[A-Za-z]:*) continue ;; esac
    printf 'A:%s=%s\0' "$__da_n" "$(/usr/bin/cygpath -w -p -- "${!__da_n}")"
    if [ -n "${!__da_b+x}" ]; then
      case "${!__da_b}" in
        *\;*|*\\*|[A-Za-z]:*) ;;
        *) printf 'B:%s=%s\0' "$__da_n" "$(/usr/bin/cygpath -w -p -- "${!__da_b}")" ;;
      esac
    fi
  done
fi
exit 0
