// agentenv: OpenCode plugin written by `agentenv init opencode`
// (`agentenv init opencode --remove` takes it out; edits are overwritten).
// shell.env: each shell call gets the session's public variables, from a
// pipe (no value on a command line). tool.execute.before: a shell command
// is rewritten to run with the sensitive variables and masked output; a
// file tool aimed at a store is refused. docs/agents.md in agentenv.
import { spawnSync } from "node:child_process";

const AGENTENV = @AGENTENV@;

function ask(args, input, cwd) {
  const r = spawnSync(AGENTENV, ["hook", "opencode", ...args], {
    input, cwd, encoding: "utf8", maxBuffer: 64 << 20,
  });
  if (r.stderr) process.stderr.write(r.stderr);
  if (r.error || r.status !== 0 || !r.stdout.trim()) return null;
  try { return JSON.parse(r.stdout); } catch { return null; }
}

export const AgentenvPlugin = async ({ directory }) => ({
  "shell.env": async (input, output) => {
    const env = ask(["shell-env"], "", input.cwd || directory);
    if (env && typeof env === "object") {
      for (const [k, v] of Object.entries(env)) if (typeof v === "string") output.env[k] = v;
    }
  },
  "tool.execute.before": async (input, output) => {
    const event = JSON.stringify({ tool_name: input.tool, tool_input: output.args, cwd: directory });
    const a = ask(["pre-tool-use"], event, directory);
    if (!a) return;
    if (typeof a.deny === "string") throw new Error(a.deny);
    if (a.args && typeof a.args === "object") Object.assign(output.args, a.args);
  },
});
