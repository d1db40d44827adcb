# agentenv shell hook (fish): agentenv hook fish | source   in ~/.config/fish/config.fish
set -g __agentenv_bin '/usr/local/bin/agentenv'
function __agentenv_hook --on-event fish_prompt
    if test "$__agentenv_pwd" = "$PWD"; and set -q __agentenv_pwd
        for f in $__agentenv_watch
            if test "$f" -nt "$__agentenv_stamp"
                __agentenv_reload
                return
            end
        end
        return
    end
    __agentenv_reload
end
function __agentenv_unprepend
    set -l n $argv[1]
    set -l had $argv[2]
    set -l old $argv[3]
    set -l ours $argv[4]
    set -l cur (string join : -- $$n)
    if test "$cur" = "$ours"
        if test "$had" = 1
            set -gx $n $old
        else
            set -eg $n
        end
        return 0
    end
    set -l keep $$n
    for e in $argv[5..-1]
        set -l i (contains -i -- $e $keep)
        and set -e keep[$i]
    end
    if test (count $keep) -eq 0; and test "$had" != 1
        set -eg $n
    else
        set -gx $n $keep
    end
end
function __agentenv_reload
    if functions -q __agentenv_undo
        __agentenv_undo
        functions -e __agentenv_undo
    end
    set -g __agentenv_pwd $PWD
    set -g __agentenv_watch
    if not test -x "$__agentenv_bin"
        if not set -q __agentenv_missing
            printf 'agentenv: %s is missing; the hook loads nothing until it is back\n' "$__agentenv_bin" >&2
        end
        set -g __agentenv_missing 1
        return 0
    end
    set -e __agentenv_missing
    set -l warned ''
    set -q __agentenv_warned; and set warned $__agentenv_warned
    set -l shown ''
    set -q __agentenv_shown; and set shown $__agentenv_shown
    set -l out ("$__agentenv_bin" hook fish --load --pid $fish_pid --warned "$warned" --shown "$shown" | string collect)
    set -l rc $pipestatus[1]
    if test "$rc" = 0
        printf '%s\n' $out | source
    else
        printf 'agentenv: the hook could not load the environment (exit %s); the shell goes on without it\n' "$rc" >&2
    end
    return 0
end
