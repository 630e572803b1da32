// orcmem for OpenCode: written by `orcmem setup opencode` (or `orcmem init`); `--remove` takes it out again and
// a new setup writes it over, so edits here do not last. It runs `orcmem hook NAME` as Claude Code's hooks do:
// the project brief in the session's system prompt, recall beside each prompt, the memories about a file or
// command with that tool's result, and each turn and the session's end recorded for learning. It never blocks
// OpenCode: every call has a time limit, and any failure adds nothing.
import { spawn } from "node:child_process";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

const ORCMEM = __ORCMEM_COMMAND__;
const ENVIRONMENT = __ORCMEM_ENVIRONMENT__;
const CONTEXT_MS = 10000; // the brief and recall (a first run loads Python; the warm server answers in ms)
const TOOL_MS = 3000; // memory at tool time: looked up while the tool runs, waited for at most this after it
const LEARN_MS = 5000; // recording a turn or the session's end (the process goes on after this, on its own)

let counter = 0;

// OpenCode's session database, where learning reads the session (1.x, the npm release's channel): $OPENCODE_DB
// (relative to its data folder), else $XDG_DATA_HOME/opencode/opencode.db, else ~/.local/share/opencode/opencode.db.
function database() {
  const data = join(process.env.XDG_DATA_HOME || join(homedir(), ".local", "share"), "opencode");
  const named = process.env.OPENCODE_DB;
  return named ? (isAbsolute(named) ? named : join(data, named)) : join(data, "opencode.db");
}

// Run `orcmem hook NAME` with the payload on stdin; resolve to what it printed, or "" on any failure or timeout.
function hook(name, payload, limit, keep = false) {
  return new Promise((resolve) => {
    let child = null;
    const timer = setTimeout(() => {
      if (!keep) {
        try {
          child?.kill("SIGKILL");
        } catch {}
      }
      resolve("");
    }, limit);
    const done = (text) => {
      clearTimeout(timer);
      resolve(text);
    };
    try {
      child = spawn(ORCMEM[0], [...ORCMEM.slice(1), "hook", name], {
        stdio: ["pipe", "pipe", "ignore"],
        env: { ...process.env, ...ENVIRONMENT },
        detached: keep, // learning outlives OpenCode's exit
      });
      const chunks = [];
      child.on("error", () => done(""));
      child.stdout.on("data", (chunk) => chunks.push(chunk));
      child.on("close", () => done(Buffer.concat(chunks).toString("utf8")));
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify(payload));
      if (keep) child.unref();
    } catch {
      done("");
    }
  });
}

// The context a hook's answer adds (`hookSpecificOutput.additionalContext`), or "".
function context(output) {
  try {
    const text = JSON.parse(output)?.hookSpecificOutput?.additionalContext;
    return typeof text === "string" ? text : "";
  } catch {
    return "";
  }
}

// A part id OpenCode accepts, sorting after the prompt's own parts: its ascending form (the low 48 bits of the time
// in ms times 4096 plus a counter, in hex; then random letters), or, should a clock disagree, the last id extended.
function partId(parts) {
  const letters = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  const random = (n) => Array.from({ length: n }, () => letters[Math.floor(Math.random() * letters.length)]).join("");
  const stamp = ((BigInt(Date.now()) * 4096n + BigInt(counter++ % 4096)) % (1n << 48n)).toString(16).padStart(12, "0");
  const id = `prt_${stamp}${random(14)}`;
  const last = parts.map((part) => String(part.id ?? "")).sort().pop() ?? "";
  return id > last ? id : `${last}${random(4)}`;
}

export const OrcmemPlugin = async ({ directory }) => {
  const briefs = new Map(); // session id -> its brief (a promise): asked once per session in this process
  const calls = new Map(); // tool call id -> the memories about it (a promise)
  const payload = (session, event) => ({ session_id: session, cwd: directory, hook_event_name: event });
  const learn = (session, event) => ({ ...payload(session, event), transcript_path: database() });
  const brief = (session) => {
    if (!briefs.has(session)) {
      briefs.set(session, hook("session-start", payload(session, "SessionStart"), CONTEXT_MS).then(context));
    }
    return briefs.get(session);
  };
  return {
    "chat.message": async (input, output) => {
      try {
        await brief(input.sessionID); // the session's recall starts after its brief
        const prompt = output.parts
          .filter((part) => part.type === "text" && !part.synthetic && typeof part.text === "string")
          .map((part) => part.text)
          .join("\n");
        if (!prompt.trim()) return;
        const asked = { ...payload(input.sessionID, "UserPromptSubmit"), prompt };
        const text = context(await hook("prompt", asked, CONTEXT_MS));
        if (text) {
          const where = { sessionID: input.sessionID, messageID: output.message.id };
          output.parts.push({ id: partId(output.parts), ...where, type: "text", text, synthetic: true });
        }
      } catch {}
    },
    "experimental.chat.system.transform": async (input, output) => {
      try {
        if (!input.sessionID) return;
        const text = await brief(input.sessionID);
        if (text) output.system.push(text);
      } catch {}
    },
    "tool.execute.before": async (input, output) => {
      try {
        const asked = { ...payload(input.sessionID, "PostToolUse"), tool_name: input.tool, tool_input: output.args ?? {} };
        calls.set(input.callID, hook("pre-tool-use", asked, TOOL_MS).then(context));
      } catch {}
    },
    "tool.execute.after": async (input, output) => {
      try {
        const pending = calls.get(input.callID);
        calls.delete(input.callID);
        const text = pending ? await pending : "";
        if (text && typeof output.output === "string") output.output += `\n\n${text}`;
      } catch {}
    },
    event: async ({ event }) => {
      try {
        const session = event?.properties?.sessionID;
        if (event?.type === "session.idle" && briefs.has(session)) {
          await hook("stop", learn(session, "Stop"), LEARN_MS, true);
        }
      } catch {}
    },
    dispose: async () => {
      try {
        const ends = [...briefs.keys()].map((session) =>
          hook("session-end", learn(session, "SessionEnd"), LEARN_MS, true),
        );
        await Promise.all(ends);
      } catch {}
    },
  };
};
