// Keeper in OpenCode: turns OpenCode's plugin calls into Keeper's hook JSON and runs `keeper hook EVENT`,
// which does all the work (the same hooks Claude Code, Codex and Gemini CLI run). Install with
// `opencode plugin <this folder> -g`, or copy this one file into ~/.config/opencode/plugin/.
//   memory at start   experimental.chat.system.transform: session-start's context, once per session,
//                     in the system prompt of each request
//   recall            chat.message: user-prompt-submit's context as a synthetic part of the prompt
//   counter and save  tool.execute.after: post-tool-use's request appended to the tool's output
//   the session file  event session.idle: the session's messages, written as JSON lines for Keeper's
//                     reader, then `stop` (OpenCode has no Stop a hook can hold: no final-save request)
// Keeper runs as its launcher beside this file (a checkout's bin/keeper) or `keeper` on PATH; the
// model's shell gets that launcher's folder on PATH and the session in KEEPER_SESSION_ID.
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { homedir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const launcher = [join(here, "..", "bin", "keeper"), join(here, "bin", "keeper")].find((p) => existsSync(p))
const program = process.env.KEEPER_BIN || launcher || "keeper"
const dataHome = process.env.XDG_DATA_HOME || join(homedir(), ".local", "share")
const data = join(dataHome, "opencode", "keeper") // Keeper's environment and the chats it reads
const env = { ...process.env, KEEPER_AGENT: "opencode", ...(launcher ? { CLAUDE_PLUGIN_DATA: data } : {}) }

function hook(event, payload) {
  const done = spawnSync(program, ["hook", event], { input: JSON.stringify(payload), env, encoding: "utf8", timeout: 15000 })
  try {
    return JSON.parse(done.stdout || "{}")
  } catch {
    return {}
  }
}

const context = (reply) => reply?.hookSpecificOutput?.additionalContext || ""

export const Keeper = async ({ client }) => {
  const memory = {} // sessionID -> session-start's context
  const folders = {} // sessionID -> its project folder (a global plugin's `directory` need not be it)
  const cwd = (sessionID) => folders[sessionID] || process.cwd()
  const base = (sessionID, name) => ({ session_id: sessionID, cwd: cwd(sessionID), hook_event_name: name })
  return {
    "experimental.chat.system.transform": async (input, output) => {
      if (!input.sessionID) return
      if (!(input.sessionID in memory)) {
        memory[input.sessionID] = context(hook("session-start", { ...base(input.sessionID, "SessionStart"), source: "startup" }))
      }
      if (memory[input.sessionID]) output.system.push(memory[input.sessionID])
    },
    "chat.message": async (input, output) => {
      const prompt = output.parts.filter((p) => p.type === "text" && !p.synthetic).map((p) => p.text).join("\n")
      const found = context(hook("user-prompt-submit", { ...base(input.sessionID, "UserPromptSubmit"), prompt }))
      if (!found) return
      const part = { id: `prt_keeper${Date.now()}`, sessionID: input.sessionID, messageID: output.message.id }
      output.parts.push({ ...part, type: "text", synthetic: true, text: found })
    },
    "tool.execute.after": async (input, output) => {
      const tool = input.tool === "bash" ? "Bash" : input.tool
      const asked = context(hook("post-tool-use", { ...base(input.sessionID, "PostToolUse"), tool_name: tool, tool_input: input.args || {} }))
      if (asked) output.output = `${output.output ?? ""}\n\n${asked}`
    },
    "shell.env": async (input, output) => {
      output.env.KEEPER_SESSION_ID = input.sessionID || ""
      if (!launcher) return
      output.env.PATH = `${dirname(program)}:${output.env.PATH || process.env.PATH || ""}`
      output.env.CLAUDE_PLUGIN_DATA = data // else the launcher looks in Claude Code's folder and sets Keeper up again there
    },
    event: async ({ event }) => {
      const info = event.properties?.info
      if (event.type === "session.created" && info?.id && info.directory) folders[info.id] = info.directory
      if (event.type !== "session.idle") return
      const id = event.properties.sessionID
      const found = await client.session.messages({ path: { id } })
      const chat = join(data, "chats", `${id}.jsonl`)
      mkdirSync(dirname(chat), { recursive: true })
      writeFileSync(chat, (found.data || []).map((m) => JSON.stringify({ info: m.info, parts: m.parts }) + "\n").join(""))
      hook("stop", { ...base(id, "Stop"), transcript_path: chat })
    },
  }
}
