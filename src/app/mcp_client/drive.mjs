// Drives `kforge mcp` with the official MCP TypeScript SDK's client over stdio, the way a
// coding agent would, and writes what it saw as JSON for src/app/mcp_e2e_test.cc to judge.
// Usage: node drive.mjs KFORGE WORKDIR RESULT.json   (examples are read from WORKDIR/ex/)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { writeFileSync } from 'node:fs';

const [kforge, work, resultPath] = process.argv.slice(2);
const out = { steps: {} };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const transport = new StdioClientTransport({
  command: kforge,
  args: ['mcp', '--runs', `${work}/runs`, '--db', `${work}/kernels.db`],
  cwd: work,
  env: { ...process.env },
  stderr: 'inherit',
});
const client = new Client({ name: 'kforge-e2e', version: '1.0.0' });

async function step(name, fn) {
  try {
    out.steps[name] = await fn();
  } catch (e) {
    out.steps[name] = { thrown: String(e && e.message ? e.message : e), code: e && e.code };
  }
}
async function waitUntilStopped(run, seconds) {
  for (let i = 0; i < seconds * 5; i++) {
    const s = await client.callTool({ name: 'run_status', arguments: { run } });
    if (s.structuredContent.state !== 'running') return s.structuredContent;
    await sleep(200);
  }
  return { state: 'still running after the test waited' };
}

await client.connect(transport);
out.server = client.getServerVersion();
out.capabilities = client.getServerCapabilities();
out.instructions = client.getInstructions();

await step('tools', async () => (await client.listTools()).tools.map((t) => t.name));
await step('verify_pass', async () =>
  client.callTool({ name: 'verify', arguments: { task: 'relu', candidate_path: `${work}/ex/relu.cc`, seed: 3 } }));
await step('verify_fail', async () =>
  client.callTool({ name: 'verify', arguments: { task: 'layernorm', candidate_path: `${work}/ex/layernorm.cc`, seed: 3, full: true } }));
await step('verify_missing_file', async () =>
  client.callTool({ name: 'verify', arguments: { task: 'relu', candidate_path: `${work}/ex/none.cc` } }));
await step('unknown_tool', async () => client.callTool({ name: 'write_verdict', arguments: {} }));
await step('bad_argument', async () =>
  client.callTool({ name: 'verify', arguments: { task: 'relu', candidate_path: 7 } }));

// Two repairs at once; the second is cancelled straight away while the first goes on.
let a, b;
await step('start_a', async () => {
  const r = await client.callTool({ name: 'start_repair',
    arguments: { task: 'layernorm', candidate_path: `${work}/ex/layernorm.cc`, seed: 11 } });
  a = r.structuredContent && r.structuredContent.run;
  return r;
});
await step('start_b', async () => {
  const r = await client.callTool({ name: 'start_repair',
    arguments: { task: 'softmax', candidate_path: `${work}/ex/softmax.cc`, seed: 12, out: `${work}/run-b` } });
  b = r.structuredContent && r.structuredContent.run;
  return r;
});
await step('cancel_b', async () => client.callTool({ name: 'cancel_run', arguments: { run: b } }));
await step('status_b_cancelled', async () =>
  (await client.callTool({ name: 'run_status', arguments: { run: b } })).structuredContent);
await step('log_b', async () =>
  (await client.callTool({ name: 'read_log', arguments: { run: b, type: 'cancelled' } })).structuredContent);
await step('finished_a', async () => waitUntilStopped(a, 240));
await step('final_a', async () => client.callTool({ name: 'read_final_candidate', arguments: { run: a } }));
await step('verdicts_a', async () =>
  (await client.callTool({ name: 'read_verdicts', arguments: { run: a } })).structuredContent);
await step('resume_b', async () => client.callTool({ name: 'resume_run', arguments: { run: b } }));
await step('finished_b', async () => waitUntilStopped(b, 240));

await step('resources', async () => (await client.listResources()).resources.map((r) => r.uri));
await step('summary_a', async () => {
  const name = a.split('/').pop();
  return client.readResource({ uri: `kforge://run/${name}/summary` });
});
await step('resource_escape', async () => client.readResource({ uri: 'kforge://run/../../etc/passwd' }));
await step('kb', async () =>
  (await client.callTool({ name: 'query_knowledge_base', arguments: { failure_class: 'precision' } })).structuredContent);

await client.close();
writeFileSync(resultPath, JSON.stringify(out, null, 2));
