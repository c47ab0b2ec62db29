// DAP clients for tests/test_dapserver.py, driven by VS Code's own test client (@vscode/debugadapter-testsupport).
// Usage: node dap_clients.js SCENARIO PORT TOKEN; prints one JSON object with what the clients saw.
const {DebugClient} = require('@vscode/debugadapter-testsupport');

const [scenario, port, token] = [process.argv[2], parseInt(process.argv[3], 10), process.argv[4]];

async function join(attachToken) {
  const dc = new DebugClient('node', '', 'python');  // connects to PORT; the arguments name no adapter to start
  dc.defaultTimeout = 15000;
  await dc.start(port);
  await dc.initializeRequest({adapterID: 'python', pathFormat: 'path', linesStartAt1: true, columnsStartAt1: true});
  return dc;
}

async function failure(promise) {
  try {
    await promise;
    return null;
  } catch (error) {
    return error.message;
  }
}

async function topLine(dc, threadId) {
  const trace = await dc.stackTraceRequest({threadId, startFrame: 0, levels: 1});
  return trace.body.stackFrames[0].line;
}

async function attach(dc, attachToken) {
  const initialized = dc.waitForEvent('initialized');
  await dc.attachRequest({token: attachToken});
  await initialized;
  const stopped = dc.waitForEvent('stopped');  // the session is paused: told on configurationDone
  await dc.configurationDoneRequest();
  return (await stopped).body;
}

const scenarios = {
  // Back in time: the session is paused after a recorded function returned; step back through its lines.
  async stepback() {
    const dc = new DebugClient('node', '', 'python');
    dc.defaultTimeout = 15000;
    await dc.start(port);
    const capabilities = (await dc.initializeRequest({adapterID: 'python', pathFormat: 'path', linesStartAt1: true,
      columnsStartAt1: true})).body;
    const stop = await attach(dc, token);
    const live = await topLine(dc, stop.threadId);
    const lines = [];
    const values = [];
    for (let i = 0; i < 3; i++) {
      const stopped = dc.waitForEvent('stopped');
      await dc.stepBackRequest({threadId: stop.threadId});
      const told = (await stopped).body;
      const frame = (await dc.stackTraceRequest({threadId: told.threadId})).body.stackFrames[0];
      lines.push(frame.line);
      const scopes = (await dc.scopesRequest({frameId: frame.id})).body.scopes;
      const found = (await dc.variablesRequest({variablesReference: scopes[0].variablesReference})).body.variables;
      values.push(Object.fromEntries(found.map(v => [v.name, v.value])));
    }
    const evaluated = (await dc.evaluateRequest({expression: 'count', context: 'hover',
      frameId: (await dc.stackTraceRequest({threadId: stop.threadId})).body.stackFrames[0].id})).body.result;
    let stopped = dc.waitForEvent('stopped');
    await dc.nextRequest({threadId: stop.threadId});  // forward through the history
    await stopped;
    const afterNext = await topLine(dc, stop.threadId);
    stopped = dc.waitForEvent('stopped');
    await dc.send('reverseContinue', {threadId: stop.threadId});
    await stopped;
    const first = await topLine(dc, stop.threadId);
    await dc.stop();
    return {supportsStepBack: capabilities.supportsStepBack, live, lines, values, evaluated, afterNext, first};
  },
  // Two clients join; the first steps, both see the new stop.
  async two() {
    const a = await join();
    const b = await join();
    const first = await attach(a, token);
    await attach(b, token);
    const threads = (await b.threadsRequest()).body.threads;
    const before = await topLine(b, first.threadId);
    const seenByA = a.waitForEvent('stopped');
    const seenByB = b.waitForEvent('stopped');
    await a.nextRequest({threadId: first.threadId});
    const [stopA, stopB] = [(await seenByA).body, (await seenByB).body];
    const scopes = (await b.scopesRequest({frameId: (await b.stackTraceRequest({threadId: stopB.threadId})).body
      .stackFrames[0].id})).body.scopes;
    const names = (await b.variablesRequest({variablesReference: scopes[0].variablesReference})).body.variables
      .map(v => v.name);
    const result = {threads: threads.length, before, reasonA: stopA.reason, reasonB: stopB.reason,
      afterA: await topLine(a, stopA.threadId), afterB: await topLine(b, stopB.threadId), names};
    await Promise.all([a.stop(), b.stop()]);  // disconnect: the session stays with its owner
    return result;
  },
  // A read-only client looks, and is refused a step.
  async readonly() {
    const dc = await join();
    const stop = await attach(dc, token);
    const line = await topLine(dc, stop.threadId);
    const refused = await failure(dc.nextRequest({threadId: stop.threadId}));
    const refusedEval = await failure(dc.evaluateRequest({expression: '1 + 1', context: 'repl'}));
    const stillLine = await topLine(dc, stop.threadId);
    await dc.stop();
    return {line, refused, refusedEval, stillLine};
  },
  // A wrong token: refused, the connection closed, and nothing asked before it is answered.
  async badtoken() {
    const dc = await join();
    const before = await failure(dc.threadsRequest());
    const refused = await failure(dc.attachRequest({token: 'not-' + token}));
    const closed = new Promise(resolve => dc._socket.on('close', () => resolve(true)));
    const after = await Promise.race([closed, new Promise(r => setTimeout(() => r(false), 5000))]);
    return {before, refused, closed: after};
  },
};

scenarios[scenario]()
  .then(result => { console.log(JSON.stringify(result)); process.exit(0); })
  .catch(error => { console.log(JSON.stringify({error: error.message})); process.exit(1); });
