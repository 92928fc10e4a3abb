# shellcheck shell=bash
# A Stop with nothing new answered without Python: bin/keeper sources this after count.bash (whose
# keeper_answer, keeper_key and keeper_files_hold it uses) under bash 4.1+ for `hook stop` and calls
# keeper_stop "$@". When Keeper's record for the session vouches for this very Stop (the same reply,
# the same tally, every file the update reads unchanged) it appends the hook log's line, prints {} and
# exits; otherwise it returns and bin/keeper goes on to Python, with the payload on stdin as it came and
# what Keeper needs to write the next record exported. Keeper writes the record and owns every rule:
# keeper/hooks/idle.py says why it can never answer a Stop that would record something or ask for a
# save, and docs/counter.md writes the record down.
# Shell builtins only (read, printf, [[ ]], parameter expansion, redirections): no process starts.

keeper_stop() {
  case ${OSTYPE-} in msys* | cygwin*) return ;; esac # Git Bash: keeper.exe answers there
  keeper_answer keeper_stop_payload "$@"
}

# The checks, in order; returns 0 only when the record vouches for this Stop.
keeper_stop_payload() {
  local head rest tail sid cwd key record tag found transcript said tally size stats python log='' name
  # The fields around the reply, each a plain value (no escapes), the session id first, as Claude Code
  # writes them; anything else is unusual, and Python reads it.
  local plain='('$KEEPER_JSON_PLAIN'|\[\]|\{\})' end
  local fields='^\{"session_id":"([A-Za-z0-9_-]{1,64})"(,"[a-z_]+":'$plain')*,"last_assistant_message":"'
  [[ $payload =~ $fields ]] || return 1
  head=${BASH_REMATCH[0]} sid=${BASH_REMATCH[1]}
  [[ $head =~ ,\"cwd\":\"([^\"\\]*)\" ]] || return 1
  cwd=${BASH_REMATCH[1]}
  [[ ${CLAUDE_PLUGIN_DATA-} == /* ]] || return 1
  keeper_key "$cwd" || return 1
  record=$CLAUDE_PLUGIN_DATA/counter/$sid.stop
  export KEEPER_LAUNCHER_STOP="$record" KEEPER_LAUNCHER_KEY="$key"

  {
    IFS= read -r tag && IFS= read -r found && IFS= read -r transcript && IFS= read -r said && IFS= read -r tally &&
      IFS= read -r size && IFS= read -r stats && IFS= read -r python && keeper_files_hold "$record" @
  } 2>/dev/null <"$record" || return 1
  [[ $tag == 'keeper-stop 1' && $found == "$key" && $size =~ ^[0-9]{1,7}$ ]] || return 1
  # The reply Keeper found nothing new in, as the payload spells it: Keeper's spelling holds no bare
  # quote and ends no escape, so the quote after it closes the string.
  rest=${payload:${#head}}
  [[ ${rest:0:${#said}} == "$said" ]] || return 1
  tail=${rest:${#said}}
  end='^"(,"[a-z_]+":'$plain')*\}'$'\n''?$'
  [[ $tail =~ $end ]] || return 1
  # Each field Keeper reads once, where it was looked at: no second one, no continuation (its reply is not
  # the session's), no Gemini's reply field.
  [[ $head$tail == *'"stop_hook_active":true'* || $head$tail == *'"prompt_response"'* ]] && return 1
  [[ ${head%,\"last_assistant_message\":\"}$tail == *'"last_assistant_message"'* ]] && return 1
  for name in session_id cwd transcript_path stop_hook_active; do
    [[ $head$tail == *\"$name\"*\"$name\"* ]] && return 1
  done
  [[ $head == *',"transcript_path":"'"$transcript"'"'[,}]* ]] || return 1
  [[ $tally == /* && $stats == /* && -f $stats && ! -L $stats ]] || return 1
  [[ $python == /* && -x $python ]] || return 1 # Keeper's environment is still there
  if [[ -e $tally || -L $tally ]]; then # the tally only grows: the same size is the same tally
    [[ -f $tally && ! -L $tally ]] && { IFS= read -r -N 1048576 log <"$tally" || [[ -n $log ]]; } || return 1
  fi
  ((${#log} == size && size < 1048576)) || return 1 # none yet: no tool use, as Keeper read it
  { printf 'stop\t0\t0.0\n' >>"$stats"; } 2>/dev/null || return 1
  printf '{}'
}
