// Drives a GTP engine the way Sabaki does, through Sabaki's own GTP controller (@sabaki/gtp),
// and prints what it saw as one JSON object on stdout (tests/test_sabaki_client.py checks it).
//
// Usage: node drive.js ENGINE [ARGS...]
//
// Steps (each recorded under its name in the JSON): attach (name, version, protocol_version,
// list_commands, as Sabaki does on start), sync (komi, boardsize, the move history through
// ControllerStateTracker), genmove, analysis (Sabaki's preferred analysis command streamed,
// then stopped by sending the next command, as Sabaki does), lz-analyze, genmove_analyze,
// and a sync that must fail (a capturing move is illegal in NoGo).

const {Controller, ControllerStateTracker} = require('@sabaki/gtp')

const [engine, ...engineArgs] = process.argv.slice(2)
const report = {}

// Sabaki's parser of analysis lines (src/modules/helper.js parseAnalysis, simplified):
// "info move D4 visits 836 winrate 4656 ... pv D4 Q16 info move ..." -> [{move, visits, ...}]
function parseInfo(line, floats) {
  return line
    .split(/\s*info\s+/)
    .slice(1)
    .map(chunk => {
      let words = chunk.trim().split(/\s+/)
      let pvAt = words.indexOf('pv')
      let pv = pvAt < 0 ? [] : words.slice(pvAt + 1)
      let fields = {}
      let end = pvAt < 0 ? words.length : pvAt
      for (let i = 0; i + 1 < end; i += 2) fields[words[i]] = words[i + 1]
      let winrate = fields.winrate.includes('.') || floats ? +fields.winrate * 100 : +fields.winrate / 100
      return {
        move: fields.move,
        visits: +fields.visits,
        winrate, // percent, as Sabaki shows it
        rawWinrate: fields.winrate,
        prior: fields.prior,
        lcb: fields.lcb,
        order: +fields.order,
        scoreLead: fields.scoreLead == null ? null : +fields.scoreLead,
        pv
      }
    })
}

// Stream an analysis command; after `lines` info lines send `stopWith` (Sabaki stops analysis
// by sending its next command). Returns what was seen.
async function stream(controller, command, lines, stopWith, floats) {
  let seen = []
  let t0 = Date.now()
  let stopPromise = null
  let analysis = controller.sendCommand(command, ({line}) => {
    if (!line.startsWith('info')) return
    seen.push({t: Date.now() - t0, variations: parseInfo(line, floats)})
    if (seen.length === lines && stopPromise == null) {
      stopPromise = controller.sendCommand(stopWith)
    }
  })
  let response = await analysis
  let after = stopPromise == null ? null : await stopPromise
  return {
    error: response.error,
    contentLines: response.content.split('\n').length,
    lines: seen.map(({t, variations}) => ({t, count: variations.length, top: variations.slice(0, 3)})),
    stoppedAfter: Date.now() - t0,
    next: after == null ? null : {error: after.error, content: after.content}
  }
}

async function main() {
  let controller = new Controller(engine, engineArgs)
  let stderr = []
  controller.on('stderr', ({content}) => stderr.push(content))
  let tracker = new ControllerStateTracker(controller)
  controller.start()

  // Attach, as Sabaki does when an engine is started.
  let attach = {}
  for (let name of ['name', 'version', 'protocol_version', 'list_commands']) {
    let res = await controller.sendCommand({name})
    attach[name] = {error: res.error, content: res.content}
  }
  report.attach = attach
  let commands = attach.list_commands.content.split('\n').map(x => x.trim())
  report.analyzeCommand = ['analyze', 'kata-analyze', 'lz-analyze'].find(x => commands.includes(x))
  report.genmoveCommand =
    ['genmove_analyze', 'kata-genmove_analyze', 'lz-genmove_analyze'].find(x => commands.includes(x)) ||
    'genmove'

  // Sync a position (Sabaki: komi, boardsize, then the history).
  let history = [
    {name: 'play', args: ['B', 'E5']},
    {name: 'play', args: ['W', 'C3']},
    {name: 'play', args: ['B', 'G7']}
  ]
  await tracker.sync({komi: 0, boardsize: [9, 9], history})
  report.sync = {state: JSON.parse(JSON.stringify(tracker.state))}

  // genmove for white; Sabaki then syncs the same history plus that move (nothing to send).
  let gen = await tracker.queueCommand({name: 'genmove', args: ['W']})
  report.genmove = {error: gen.error, content: gen.content}
  history.push({name: 'play', args: ['W', gen.content.toUpperCase()]})
  let sent = []
  let onSent = ({command}) => sent.push(command.name)
  controller.on('command-sent', onSent)
  await tracker.sync({komi: 0, boardsize: [9, 9], history})
  controller.removeListener('command-sent', onSent)
  report.resync = {sent, historyLength: tracker.state.history.length}

  // Sabaki's analysis (its first listed analysis command), stopped by the next command.
  report.analysis = await stream(
    controller,
    {name: report.analyzeCommand, args: ['B', '10']},
    3,
    {name: 'protocol_version'},
    report.analyzeCommand !== 'lz-analyze'
  )
  report.lzAnalysis = await stream(controller, {name: 'lz-analyze', args: ['B', '10']}, 3, {name: 'name'}, false)

  // Sabaki's move generation with analysis: info lines, then "play <move>".
  let genLines = []
  let ga = await tracker.queueCommand({name: report.genmoveCommand, args: ['B', '5']}, ({line}) =>
    genLines.push(line)
  )
  report.genmoveAnalyze = {
    error: ga.error,
    infoLines: genLines.filter(line => line.startsWith('info')).length,
    lastLines: genLines.slice(-2)
  }
  await new Promise(resolve => setTimeout(resolve, 50)) // the tracker records the move async
  report.afterGenmoveAnalyze = {history: JSON.parse(JSON.stringify(tracker.state.history))}

  // NoGo: capturing is illegal, so this history cannot be replayed and the sync fails.
  try {
    await tracker.sync({
      komi: 0,
      boardsize: [9, 9],
      history: [
        {name: 'play', args: ['B', 'B1']},
        {name: 'play', args: ['W', 'A1']},
        {name: 'play', args: ['B', 'A2']}
      ]
    })
    report.illegalSync = {failed: false}
  } catch (err) {
    report.illegalSync = {failed: true, message: err.message}
  }

  let exited = new Promise(resolve =>
    controller.process.once('exit', (code, signal) => resolve({code, signal}))
  )
  await controller.stop()
  report.exit = await exited
  report.stderrTail = stderr.slice(-5)
}

let timer = setTimeout(() => {
  report.timeout = true
  process.stdout.write(JSON.stringify(report) + '\n')
  process.exit(2)
}, 90000)

main()
  .then(() => {
    clearTimeout(timer)
    process.stdout.write(JSON.stringify(report) + '\n')
  })
  .catch(err => {
    clearTimeout(timer)
    report.exception = String((err && err.stack) || err)
    process.stdout.write(JSON.stringify(report) + '\n')
    process.exit(1)
  })
