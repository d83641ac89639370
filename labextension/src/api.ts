// Requests to ragtt's Jupyter server extension (ragtt_nb.server), through Jupyter's own
// ServerConnection: its token, cookies and XSRF header go with every request.
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

export interface LoggedQuery {
  query_id: string;
  text: string;
  ts: string;
  index_version: number;
  mode: string | null;
  answer: string | null; // its start; an extractive answer's quoted text, without the label
  extractive: boolean;
  kind: 'live' | 'replay' | 'golden';
  original_query_id: string | null;
  replays: LoggedQuery[]; // the replays of this run, newest first (not rows of their own)
}
export interface QueryPage {
  total: number;
  offset: number;
  queries: LoggedQuery[];
  evaluation_runs: number; // the evaluations' cells (runs too, matching the search): not listed
}
export interface Version {
  version: number;
  operation: string;
  committed_at: string;
  as_of: string | null; // the date its ingest carried (a release's), if any
  label: string | null;
  changed: { documents: string[]; removed: string[]; chunks_added: number; chunks_removed: number } | null;
}
export interface Evaluation {
  evaluation_id: string;
  dataset: string | null;
  source: string | null;
  versions: number[];
  questions: number;
  metrics: string[];
  mode: string | null;
  top_k: number | null;
  ts: string;
}
export interface Source {
  source: string;
  pdf: boolean;
}
export interface Listing {
  projects: string[];
  read_only: boolean;
  located: string | null;
}

export class Api {
  readOnly = false; // the lab setting: the server is asked to refuse writes
  private settings = ServerConnection.makeSettings();

  /** `path` under {base_url}ragtt/api/; JSON in and out; a failure throws its detail, and
   *  so does a server that has not answered within `wait` seconds (none: no bound). */
  async request<T>(path: string, init: RequestInit = {}, wait?: number): Promise<T> {
    const url = URLExt.join(this.settings.baseUrl, 'ragtt', 'api', path);
    const headers = new Headers(init.headers);
    if (init.body) headers.set('Content-Type', 'application/json');
    if (this.readOnly) headers.set('X-Ragtt-Read-Only', '1');
    const signal = wait ? AbortSignal.timeout(wait * 1000) : init.signal;
    let response: Response;
    let body: any;
    try {
      response = await ServerConnection.makeRequest(url, { ...init, headers, signal }, this.settings);
      body = await response.json().catch(() => ({}));
    } catch (err) {
      if (wait && signal?.aborted) throw new Error(`the server did not answer within ${wait} s (${path.split('?')[0]})`);
      throw err;
    }
    if (!response.ok) {
      const detail = typeof body.detail === 'string' ? body.detail : JSON.stringify(body.detail ?? body);
      throw new Error(`${response.status}: ${detail}`);
    }
    return body as T;
  }

  /** The project's own route, `project` root-relative (each segment escaped). */
  project<T>(project: string, path: string, init: RequestInit = {}, wait?: number): Promise<T> {
    const where = project.split('/').map(encodeURIComponent).join('/');
    return this.request<T>(`projects/${where}/${path}`, init, wait);
  }
}

export function query(params: Record<string, string | number | null | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== '') q.set(k, String(v));
  return q.toString();
}
