/**
 * `orch status`: check once and print (table or JSON, exit code 0 only when everything is ready), or
 * `--watch`: check every second and show it live in the terminal until Ctrl-C.
 */
import {UserError} from '../../lib/errors.js';
import {parseRequestTimeout} from '../../client/request-timeout.js';
import {collectStatus, type FetchText, type StatusPlan} from './collect.js';
import {formatStatusTable} from './format.js';
import {httpFetcher} from './http.js';
import {exitCodeOf, formatStatusJson, type StatusReport} from './report.js';
import {checkUrl, parseComponents, statusPlan} from './targets.js';
import {loadForTerminal} from '../../lib/load-for-terminal.js';

export interface StatusFlags {
  orchconfig?: string;
  context?: string;
  'controller-manager-url': string;
  'agent-url': string;
  components: string;
  'request-timeout': string;
  output: string;
  watch: boolean;
}

/** A round's report with the time it finished, for the live view. */
export interface StatusSnapshot {
  report: StatusReport;
  at: number;
}

/** How often --watch checks again (from the start of one round to the start of the next). */
export const WATCH_INTERVAL_MS = 1000;

export interface StatusIo {
  stdout: (text: string) => void;
  isTty: boolean;
}

const defaultIo: StatusIo = {stdout: (text) => process.stdout.write(text), isTty: Boolean(process.stdout.isTTY)};

/** Validates every option before any request, so a typo never produces a half report. */
function prepare(flags: StatusFlags, io: StatusIo) {
  if (flags.output !== 'table' && flags.output !== 'json') throw new UserError(`unknown output format "${flags.output}": expected table or json`);
  if (flags.watch && flags.output === 'json') throw new UserError('--watch shows a live view and cannot be combined with -o json; run without --watch for a one-shot JSON report');
  if (flags.watch && !io.isTty) throw new UserError('--watch needs a terminal (stdout is not a TTY); run without --watch for a one-shot report');
  let timeout;
  try {
    timeout = parseRequestTimeout(flags['request-timeout']);
  } catch (error) {
    throw new UserError((error as Error).message);
  }
  return {
    components: parseComponents(flags.components),
    controllerManagerUrl: checkUrl('controller-manager-url', flags['controller-manager-url']),
    agentUrl: checkUrl('agent-url', flags['agent-url']),
    fetch: httpFetcher(timeout.ms, timeout.text),
  };
}

export async function statusMain(flags: StatusFlags, io: StatusIo = defaultIo): Promise<StatusReport | undefined> {
  const {fetch, ...targets} = prepare(flags, io);
  const plan = await statusPlan({orchconfig: flags.orchconfig, context: flags.context, ...targets});
  if (flags.watch) {
    await watchStatus(plan, fetch);
    return undefined;
  }
  const report = await collectStatus(plan, fetch);
  io.stdout(flags.output === 'json' ? formatStatusJson(report) : formatStatusTable(report, Date.now()));
  // The report is printed either way; the exit code is what CI branches on.
  process.exitCode = exitCodeOf(report);
  return report;
}

/** Rounds one after the other (never overlapping), each started at least WATCH_INTERVAL_MS after the last, until Ctrl-C. */
async function watchStatus(plan: StatusPlan, fetch: FetchText): Promise<void> {
  const [{StateEmitter}, {renderStatusView}] = await Promise.all([import('../../ui/state-emitter.js'), loadForTerminal(() => import('../../ui/status-view.js'))]);
  const emitter = new StateEmitter<StatusSnapshot>();
  const view = renderStatusView(emitter);
  let quit = false;
  // Ctrl-C ends the view at once, even in the middle of a round waiting on a slow server.
  const quitting = view.waitUntilExit().then(() => {
    quit = true;
  });
  // Without raw mode on stdin, Ctrl-C arrives as SIGINT rather than as a key Ink reads.
  const onSignal = () => view.unmount();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    while (!quit) {
      const started = Date.now();
      const report = await Promise.race([collectStatus(plan, fetch), quitting.then(() => undefined)]);
      if (quit || !report) break;
      emitter.update({report, at: Date.now()});
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, started + WATCH_INTERVAL_MS - Date.now())))), quitting]);
      clearTimeout(timer);
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    emitter.close();
    view.unmount();
  }
}
