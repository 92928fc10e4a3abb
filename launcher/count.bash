# shellcheck shell=bash
# A tool use counted without Python: bin/keeper sources this under bash 4.1+ for a PostToolUse (or,
# with no arguments, for whatever hook the payload names: Codex passes none) and calls
# keeper_count "$@". While the session's allowance lasts it appends one byte to Keeper's own tally,
# prints {} and exits; otherwise it returns and bin/keeper goes on to Python, with the payload on
# stdin as it came. Keeper writes the allowance and owns every rule; keeper/hooks/allowance.py says
# what the record holds and why a stale or foreign one can never hold back a save request.
# Shell builtins only (read, printf, [[ ]], parameter expansion, redirections): no process starts.
# Windows runs the same in C (launcher/keeper.c); keep the two in step.

KEEPER_COUNT_MAX=65536 # a payload this long or longer goes to Python, read whole there
# A payload's field without escapes, as JSON spells it: a string holds no control character, a number no
# leading zero nor stray sign (Python reads no payload that has one: no session, nothing counted).
KEEPER_JSON_TEXT='"[^"\\[:cntrl:]]*"'
KEEPER_JSON_PLAIN=$KEEPER_JSON_TEXT'|-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?|true|false|null'
# Whether -nt and -ot compare file times to the nanosecond: bash 4.3 and later; 4.1 and 4.2 compare whole
# seconds, too coarse to tell a file from one put in its place with an mtime in the same second (a twin
# never holds there: Python decides). Lower case: not one of the KEEPER_* variables keeper_key holds.
keeper_ns_times=
((BASH_VERSINFO[0] > 4 || BASH_VERSINFO[1] >= 3)) && keeper_ns_times=1

# Prints {} and exits when the tool use is counted within the allowance; returns otherwise, having
# given stdin back (the bytes read so far, then the rest), set keeper_event when the payload named a
# PostToolUse and no argument did, and exported what Keeper needs to write the next allowance.
keeper_count() {
  case ${OSTYPE-} in msys* | cygwin*) return ;; esac # Git Bash: Windows appends under a lock; keeper.exe counts there
  keeper_answer keeper_count_payload "$@"
}

# Reads the payload into $payload and runs the check "$@" on it: exits when the check answered (0),
# else gives stdin back (the bytes read so far, then the rest) and returns. Shared by stop.bash.
keeper_answer() {
  local LC_ALL=C payload='' whole=''
  IFS= read -r -N "$KEEPER_COUNT_MAX" payload || whole=1
  if [[ -n $whole ]]; then
    "$@" && exit 0
    # the payload again, for Python (a here-string adds a newline: JSON allows it); a pipe if that fails
    { exec 0<<<"$payload"; } 2>/dev/null || exec 0< <(printf '%s' "$payload")
  else
    exec 0< <(
      printf '%s' "$payload"
      while IFS= read -r -N "$KEEPER_COUNT_MAX" payload || [[ -n $payload ]]; do
        printf '%s' "$payload"
        payload=''
      done
    )
  fi
}

# Sets key: whatever chooses Keeper's store, settings and project for a call in the folder $1. Returns 1
# when the key cannot hold the project: Keeper starts from the first of $CLAUDE_PROJECT_DIR and the
# payload's cwd that is a folder, else from its own working directory (keeper.store.resolve.start_folder),
# so that one must be an absolute path to a folder.
keeper_key() {
  local name value first=${CLAUDE_PROJECT_DIR:-$1}
  [[ $first == /* && -d $first ]] || return 1
  key="cwd=${#1}:$1"
  for name in CLAUDE_PROJECT_DIR HOME XDG_CONFIG_HOME XDG_DATA_HOME ${!KEEPER_@}; do
    case $name in KEEPER_COUNTE[RD]* | KEEPER_LAUNCHER_* | KEEPER_COUNT_MAX) continue ;; esac
    [[ -n ${!name+set} ]] || continue
    value=${!name}
    key+=" $name=${#value}:$value"
  done
}

# Reads a record's file lines from stdin, up to `end`; returns 0 when every one holds. $1 is the record
# (the files must be older); $2 the further kinds of line the record may hold (@: the mtime of a twin).
keeper_files_hold() {
  local line file='' held had
  while IFS= read -r line; do
    case $line in
      end) return 0 ;;
      +/*) file=${line:1} && [[ -e $file && $file -ot $1 ]] || return 1 ;;
      =*) # the bytes Keeper read: a file replaced by one with an older mtime (mv, cp -p, rsync -a) differs
        [[ -n $file && ${line:1} =~ ^[0-9]{1,5}$ ]] || return 1
        IFS= read -r -N "$((${line:1} + 1))" held && [[ ${held: -1} == $'\n' ]] || return 1
        had='' && { IFS= read -r -N "$((${line:1} + 1))" had <"$file" || [[ -n $had ]]; }
        [[ $had == "${held%?}" ]] || return 1
        { IFS= read -r -d '' had <"$file"; } 2>/dev/null && return 1 # read drops a NUL: none may be there
        file='' ;;
      @/*) # a twin Keeper dated as it found the file: the same mtime, to the nanosecond where bash reads them
        [[ $2 == *@* && -n $keeper_ns_times && -n $file && -f ${line:1} && ! $file -nt ${line:1} && ! $file -ot ${line:1} ]] ||
          return 1
        file='' ;;
      -/*) [[ -e ${line:1} || -L ${line:1} ]] && return 1 ;;
      *) return 1 ;;
    esac
  done
  return 1
}

# The checks, in order; returns 0 only when the tool use was counted within the allowance.
keeper_count_payload() {
  local event='' head rest sid cwd key record tag found limit tally stats python log=''

  case $#:${1-}:${2-} in
    2:hook:post-tool-use | 2:hook:post-tool-use-failure) event=$2 ;;
  esac
  # The fields before tool_input, each a plain value (no escapes), the session id first, as Claude
  # Code and Codex write them; anything else is unusual, and Python reads it.
  local plain='('$KEEPER_JSON_PLAIN'|\{"level":'$KEEPER_JSON_TEXT'\})'
  local fields='^\{"session_id":"([A-Za-z0-9_-]{1,64})"(,"[a-z_]+":'$plain')*,"tool_input":'
  [[ $payload =~ $fields ]] || return 1
  head=${BASH_REMATCH[0]} sid=${BASH_REMATCH[1]}
  rest=${payload:${#head}}
  if [[ -z $event ]]; then
    case $head in
      *',"hook_event_name":"PostToolUse",'*) event=post-tool-use ;;
      *',"hook_event_name":"PostToolUseFailure",'*) event=post-tool-use-failure ;;
      *) return 1 ;;
    esac
    keeper_event=$event
  fi
  [[ $head == *'"agent_'* || $rest == *'"agent_id"'* || $rest == *'"agent_type"'* ]] && return 1 # a subagent
  [[ $rest == *keeper* ]] && return 1                                                              # maybe `keeper save`
  [[ $rest == *'\u'[!0]* || $rest == *'\u0'[!0]* || $rest == *'\u00'[!01]* ]] && return 1          # a letter escaped
  [[ $rest == *'}' || $rest == *$'}\n' ]] || return 1
  [[ $head =~ ,\"cwd\":\"([^\"\\]*)\" ]] || return 1
  cwd=${BASH_REMATCH[1]}
  [[ ${CLAUDE_PLUGIN_DATA-} == /* ]] || return 1

  keeper_key "$cwd" || return 1
  record=$CLAUDE_PLUGIN_DATA/counter/$sid
  export KEEPER_COUNTER="$record" KEEPER_COUNTER_KEY="$key"

  # The allowance Keeper wrote: for this key, every settings file unchanged since, and complete.
  {
    IFS= read -r tag && IFS= read -r found && IFS= read -r limit && IFS= read -r tally && IFS= read -r stats &&
      IFS= read -r python && keeper_files_hold "$record"
  } 2>/dev/null <"$record" || return 1
  [[ $tag == 'keeper-allowance 1' && $found == "$key" && $limit =~ ^-?[0-9]{1,15}$ ]] || return 1
  [[ $tally == /* && -f $tally && ! -L $tally && $stats == /* && -f $stats && ! -L $stats ]] || return 1
  [[ $python == /* && -x $python ]] || return 1 # Keeper's environment is still there

  { printf u >>"$tally"; } 2>/dev/null || return 1
  export KEEPER_COUNTED="$tally" # from here on this use is in the tally: Keeper must not count it again
  IFS= read -r -N 1048576 log <"$tally" || [[ -n $log ]] || return 1
  ((${#log} < 1048576 && ${#log} <= limit)) || return 1
  { printf '%s\t0\t0.0\n' "$event" >>"$stats"; } 2>/dev/null
  printf '{}'
}
