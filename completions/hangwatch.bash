# bash completion for hangwatch. Commands and options are read from
# `hangwatch help COMMAND` as you type, so they are always the installed
# binary's own. Installed by `make install` under
# share/bash-completion/completions/hangwatch.

# The options a command's help lists: the first word of each indented option line.
_hangwatch_options() {
    "$1" help "$2" 2>/dev/null | sed -nE 's/^ +((-[a-zA-Z]), )?(--?[a-zA-Z][a-zA-Z-]*).*/\2 \3/p; s/^Usage:.*/&/p' | grep -oE -- '(^| |\[)--?[a-zA-Z][a-zA-Z-]*' | tr -d ' [' | sort -u
}

# The report formats the help of `run` names after --format.
_hangwatch_formats() {
    "$1" help run 2>/dev/null | sed -n 's/^ *--format FORMAT *//p' | sed 's/ (default.*//; s/,//g'
}

_hangwatch() {
    local cur prev exe command i
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    exe=${COMP_WORDS[0]}
    COMPREPLY=()
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "run attach dump report diff help --help --version" -- "$cur"))
        return
    fi
    command=${COMP_WORDS[1]}
    # After `run ... --`: the program, then its own arguments (files).
    for ((i = 2; i < COMP_CWORD; i++)); do
        if [ "${COMP_WORDS[i]}" = "--" ]; then
            if [ $((i + 1)) -eq "$COMP_CWORD" ]; then
                COMPREPLY=($(compgen -c -- "$cur"))
            else
                COMPREPLY=($(compgen -f -- "$cur"))
            fi
            return
        fi
    done
    case "$command" in
        help)
            [ "$COMP_CWORD" -eq 2 ] && COMPREPLY=($(compgen -W "run attach dump report diff help --man" -- "$cur"))
            return ;;
    esac
    case "$prev" in
        --format)
            COMPREPLY=($(compgen -W "$(_hangwatch_formats "$exe")" -- "$cur")); return ;;
        --sampler)
            COMPREPLY=($(compgen -W "kernel signal" -- "$cur")); return ;;
        --heartbeat-clock)
            COMPREPLY=($(compgen -W "tsc vdso" -- "$cur")); return ;;
        -o|--output|--events)
            COMPREPLY=($(compgen -f -- "$cur")); return ;;
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$(_hangwatch_options "$exe" "$command")" -- "$cur"))
    elif [ "$command" = attach ] || [ "$command" = dump ]; then
        COMPREPLY=($(compgen -W "$(ls /proc 2>/dev/null | grep -E '^[0-9]+$')" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -F _hangwatch hangwatch
