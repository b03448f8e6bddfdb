// Declarations of logic.js (the extension's logic, without the vscode API).

export interface GrepMatch {
  file: string;
  line: number;
  text: string;
}

export interface GrepReport {
  matches: GrepMatch[];
  isError: boolean;
  /** The output channel's lines. */
  lines: string[];
}

/** The Grep tool (content mode) over root, on a worker thread. */
export function grepWorkspace(root: string, pattern: string, options?: { glob?: string }): Promise<GrepReport>;

export interface PreviewFile {
  path: string;
  status: string;
  binary: boolean;
  added: number;
  deleted: number;
  review: boolean;
  old_path: string | null;
  skip_reason: string | null;
}

export interface PreviewReport {
  change: { mode: string; source: string; base: string | null; target: string | null; files: number };
  files: PreviewFile[];
  summary: { files: number; to_review: number; skipped: number; added: number; deleted: number };
  /** The output channel's lines. */
  lines: string[];
}

/** agt-review --preview --format json of root (since options.from, or the uncommitted changes). */
export function reviewPreview(root: string, options?: { agtReview?: string; from?: string }): Promise<PreviewReport>;

export function formatGrep(pattern: string, matches: GrepMatch[], isError: boolean, text: string): string[];
export function formatPreview(preview: Omit<PreviewReport, 'lines'>): string[];
