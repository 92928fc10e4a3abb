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
import { accessSync, closeSync, constants, existsSync, mkdirSync, openSync, readdirSync, readSync, statSync, writeFileSync } from "node:fs"
import { homedir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const launcher = [join(here, "..", "bin", "keeper"), join(here, "bin", "keeper")].find((p) => existsSync(p))
const program = process.env.KEEPER_BIN || launcher || "keeper"
const dataHome = process.env.XDG_DATA_HOME || join(homedir(), ".local", "share")
const data = join(dataHome, "opencode", "keeper") // Keeper's environment and the chats it reads
const env = { ...process.env, KEEPER_AGENT: "opencode", ...(launcher ? { CLAUDE_PLUGIN_DATA: data } : {}) }
const VERSION = "0.4.0" // Keeper's, as this file's package.json
const installed = process.env.KEEPER_BIN || launcher || process.platform === "win32" ? null : onItsPython()

// A `keeper` pip, pipx or uv installed, run from PATH (no launcher beside this file): its console script
// runs `site` and imports `re` before Keeper does, 0.75x `python -c pass` a hook. As the launcher does
// (bin/keeper's run_installed), a hook runs on the Python the script's first line names, isolated and
// without the site module, where that Python's one site-packages folder holds this version of Keeper
// and its dependencies; else, or when it cannot import Keeper (exit 75), the script runs as written.
function onItsPython() {
  const executable = (p) => { try { accessSync(p, constants.X_OK); return statSync(p).isFile() } catch { return false } }
  const dir = (process.env.PATH || "").split(":").find((d) => d.startsWith("/") && executable(join(d, "keeper")))
  if (!dir) return null
  const head = Buffer.alloc(4096)
  let got = 0
  try {
    const fd = openSync(join(dir, "keeper"), "r")
    got = readSync(fd, head, 0, head.length, 0)
    closeSync(fd)
  } catch {
    return null
  }
  const line = head.toString("utf8", 0, got).split("\n")[0]
  const python = line.slice(2)
  if (!line.startsWith("#!/") || /\s/.test(python) || !/\/bin\/python[^/]*$/.test(python) || !executable(python)) return null
  const lib = join(python.slice(0, python.lastIndexOf("/bin/")), "lib")
  let sites = []
  try {
    sites = readdirSync(lib).filter((n) => n.startsWith("python3")).map((n) => join(lib, n, "site-packages")).filter((s) => existsSync(s))
  } catch {
    return null
  }
  const needed = ["keeper", `claude_keeper-${VERSION}.dist-info`, "yaml", "filelock", "rapidfuzz", "platformdirs"]
  return sites.length === 1 && needed.every((n) => existsSync(join(sites[0], n))) ? { python, site: sites[0] } : null
}
const HOOK_CODE = "import sys; sys.path.append(sys.argv.pop(1))\ntry: from keeper.hooks.entry import main\nexcept ImportError: raise SystemExit(75)\nmain(sys.argv[2:])"

function hook(event, payload) {
  const run = (command, args) => spawnSync(command, args, { input: JSON.stringify(payload), env, encoding: "utf8", timeout: 15000 })
  let done = installed && run(installed.python, ["-I", "-S", "-c", HOOK_CODE, installed.site, "hook", event])
  if (!done || done.status === 75) done = run(program, ["hook", event])
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
