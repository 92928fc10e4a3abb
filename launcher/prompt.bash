# shellcheck shell=bash
# A prompt with nothing Keeper could recall answered without Python: bin/keeper sources this after
# count.bash (whose keeper_answer, keeper_key and keeper_files_hold it uses) under bash 4.1+ for
# `hook user-prompt-submit` and calls keeper_prompt "$@". When Keeper's record for the session vouches
# for the memory as its gate saw it, and this prompt is one Keeper answers with nothing (automatic recall
# off, fewer words than it tries, or fewer of its terms held than a recall needs), it appends the turn's
# byte to the tally and the hook log's line, prints {} and exits; otherwise it returns and bin/keeper goes
# on to Python, with the payload on stdin as it came and what Keeper needs to write the next record
# exported. Keeper writes the record and owns every rule: keeper/hooks/quietprompt.py says why the
# launcher never counts fewer held terms than Keeper, and docs/counter.md writes the record down.
# Shell builtins only (read, printf, [[ ]], parameter expansion, redirections): no process starts.

keeper_prompt_max=4096 # bytes of a prompt the launcher reads; a longer one goes to Python

keeper_prompt() {
  case ${OSTYPE-} in msys* | cygwin*) return ;; esac # Git Bash: keeper.exe answers there
  keeper_answer keeper_prompt_payload "$@"
}

# The checks, in order; returns 0 only when the record vouches for answering this prompt with nothing.
keeper_prompt_payload() {
  local head rest raw sid cwd key record tag found tally stats python claude mode limits stops dated respelled own
  local held folder names name
  local -a listing
  # The fields around the prompt, each a plain value (no escapes), the session id first, as Claude Code
  # writes them; anything else is unusual, and Python reads it.
  local plain='('$KEEPER_JSON_PLAIN')'
  local fields='^\{"session_id":"([A-Za-z0-9_-]{1,64})"(,"[a-z_]+":'$plain')*,"prompt":"'
  [[ $payload =~ $fields ]] || return 1
  head=${BASH_REMATCH[0]} sid=${BASH_REMATCH[1]}
  rest=${payload:${#head}}
  local string='^((\\.|[^"\\])*)"(,"[a-z_]+":'$plain')*\}'$'\n''?$'
  [[ $rest =~ $string ]] || return 1
  raw=${BASH_REMATCH[1]}
  ((${#raw} <= keeper_prompt_max)) || return 1
  # Each field Keeper reads once: no second one (a prompt's is read by Python, the last one wins).
  for name in session_id cwd prompt hook_event_name; do
    [[ $head${rest:${#raw}} == *\"$name\"*\"$name\"* ]] && return 1
  done
  [[ $head =~ ,\"cwd\":\"([^\"\\]*)\" ]] || return 1
  cwd=${BASH_REMATCH[1]}
  [[ ${CLAUDE_PLUGIN_DATA-} == /* ]] || return 1
  keeper_key "$cwd" || return 1
  record=$CLAUDE_PLUGIN_DATA/counter/$sid.prompt
  export KEEPER_LAUNCHER_PROMPT="$record" KEEPER_LAUNCHER_KEY="$key"

  {
    IFS= read -r tag && IFS= read -r found && IFS= read -r tally && IFS= read -r stats && IFS= read -r python &&
      IFS= read -r claude && IFS= read -r mode && IFS= read -r limits && IFS= read -r stops && IFS= read -r dated &&
      IFS= read -r respelled && IFS= read -r own && IFS= read -r held && IFS= read -r folder &&
      IFS= read -r names && keeper_files_hold "$record" @
  } 2>/dev/null <"$record" || return 1
  [[ $tag == 'keeper-prompt 1' && $found == "$key" && $limits =~ ^[0-9]+\ [0-9]+\ [1-9]$ ]] || return 1
  [[ $tally == /* && -f $tally && ! -L $tally && $stats == /* && -f $stats && ! -L $stats ]] || return 1
  [[ $python == /* && -x $python ]] || return 1 # Keeper's environment is still there
  [[ $claude == "${CLAUDE_CONFIG_DIR-}" ]] || return 1 # Claude Code's folder, where its auto memory is
  keeper_prompt_quiet "$raw" || return 1
  if [[ $mode == gate && $folder == /* ]]; then # the session files the gate holds, as it listed them
    for name in "$folder"/.*.md; do [[ -e $name || -L $name ]] && return 1; done
    # joined in one expansion, the folder taken off as a literal start: appending name by name copies the
    # listing each time (10,000 files: 2.4 s), and ##*/ tries every length of each path (4x the time)
    listing=("$folder"/*.md)
    [[ -e ${listing[0]} || -L ${listing[0]} ]] || listing=() # no match: the pattern itself
    printf -v name '%s/' "${listing[@]/#"$folder/"}" # none: "/"
    [[ ${name%/} == "$names" ]] || return 1
  fi
  { printf p >>"$tally"; } 2>/dev/null || return 1
  { printf 'user-prompt-submit\t0\t0.0\n' >>"$stats"; } 2>/dev/null
  printf '{}'
}

# Whether Keeper answers the prompt whose JSON string (without its quotes) is $1 with nothing, by the
# record's $mode, $limits (least words, least held terms, letters compared), $stops, $dated, $respelled,
# $own and $held. Returns 1 on any doubt: Python decides.
keeper_prompt_quiet() {
  local raw=$1 text least hits size word ident
  local -a words idents
  # printable ASCII, escapes of a quote, a slash and the line breaks and tabs only (an escaped backslash: Python)
  [[ $raw == *[![:print:]]* || $raw == *'\\'* || $raw == *'\' || $raw == *'\'[!\"/ntr]* ]] && return 1
  text=${raw//\\[ntr]/ }
  text=${text//\\\"/\"}
  text=${text//\\\//\/}
  [[ $text == "$own"* || $text == '<'* ]] && return 1 # Keeper's own request sent back (Gemini), a hook's context
  word=${text%%[! ]*}
  [[ ${text:${#word}} == /* ]] && return 1 # a command: Python answers it
  [[ $mode == quiet ]] && return 0
  least=${limits%% *} hits=${limits#* } size=${hits#* } hits=${hits%% *}
  set -f
  IFS=' ' read -r -a words <<<"$text"
  set +f
  ((${#words[@]} < least)) && return 0 # too short to recall anything
  [[ $mode == gate && $text != *[0-9]* ]] || return 1
  ident=${text//[!A-Za-z_.\/-]/ }
  set -f
  IFS=' ' read -r -a idents <<<"$ident"
  set +f
  keeper_prompt_held "$hits" "$size" "${idents[@]}"
}

# Returns 0 when fewer than $1 of the terms of the words $3... can be held ($2: letters compared).
keeper_prompt_held() {
  local hits=$1 size=$2 ident lower piece part units=' ' seen=' ' unit count=0 i start
  local -a parts
  shift 2
  for ident in "$@"; do
    while [[ $ident == [_./-]* ]]; do ident=${ident:1}; done
    while [[ $ident == *[_./-] ]]; do ident=${ident%?}; done
    [[ -n $ident ]] || continue
    lower=${ident,,}
    [[ $dated == *" $lower "* ]] && return 1 # a day asked for: the search decides
    keeper_prompt_respelled "$lower" && return 1
    if [[ $ident != *[!A-Za-z]* && ($ident != *[A-Z]* || $ident != *[a-z]* || ${ident:1} != *[A-Z]*) ]]; then
      units+="w:$lower "
      continue
    fi
    parts=()
    for piece in ${ident//[_.\/-]/ }; do # letters only: no glob character is left
      start=0
      for ((i = 1; i < ${#piece}; i++)); do
        if [[ ${piece:i:1} == [A-Z] && ${piece:i-1:1} == [a-z] ]] ||
          [[ ${piece:i-1:1} == [A-Z] && ${piece:i:1} == [A-Z] && ${piece:i+1:1} == [a-z] ]]; then
          parts+=("${piece:start:i-start}")
          start=$i
        fi
      done
      parts+=("${piece:start}")
    done
    ((${#parts[@]} > 1)) && units+="c:$lower "
    for part in "${parts[@]}"; do units+="w:${part,,} "; done
  done
  for unit in $units; do # each distinct word and whole identifier once, as Python counts distinct terms
    [[ $seen == *" $unit "* ]] && continue
    seen+="$unit "
    keeper_prompt_unit "$unit" "$size" && ((++count >= hits)) && return 1
  done
  return 0
}

# Whether the unit $1 (w:<word> or c:<whole identifier>) may give a held term ($2 letters compared).
keeper_prompt_unit() {
  local kind=${1%%:*} word=${1#*:} size=$2 i
  if [[ $kind == c ]]; then
    word=${word//y/i}
    [[ $held == *" ${word:0:size} "* ]]
    return
  fi
  ((${#word} >= 2)) || return 1
  [[ $stops == *" $word "* ]] && return 1
  word=${word//y/i}
  for ((i = 1; i <= size && i <= ${#word}; i++)); do
    [[ $held == *" ${word:0:i} "* ]] && return 0
    ((i < size)) && [[ $held == *" ${word:0:i}e "* ]] && return 0
  done
  [[ ${word:2:3} == bil && $held == *" ${word:0:2}bl "* ]]
}

# Whether the lower-case word $1 may be read as one of $respelled by a slip (keeper.recall.dates.respelled:
# one slip in five or six letters, two in more, the first or the second letter kept): no edit distance
# here, only the checks before it, so more words go to Python than need to.
keeper_prompt_respelled() {
  local word=$1 target bound missing letter i
  ((${#word} >= 5)) && [[ $word != *[!a-z]* ]] || return 1
  bound=1 && ((${#word} > 6)) && bound=2
  for target in $respelled; do
    [[ ${word:0:1} == "${target:0:1}" || ${word:1:1} == "${target:1:1}" ]] || continue
    ((${#word} - ${#target} <= bound && ${#target} - ${#word} <= bound)) || continue
    missing=0
    for ((i = 0; i < ${#target}; i++)); do
      letter=${target:i:1}
      [[ ${target:0:i} == *$letter* ]] && continue # each letter once
      [[ $word == *$letter* ]] || ((missing++))
    done
    ((missing <= bound)) && return 0
  done
  return 1
}
