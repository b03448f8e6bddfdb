// A minimal VS Code extension on the agenttools Node binding: a Grep tool
// call and an agt-review preview of the open workspace, into an output
// channel. The logic is ./logic.js (tested without VS Code).
import * as vscode from 'vscode';
import { grepWorkspace, reviewPreview } from './logic';

function workspaceRoot(): string | undefined {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder || folder.uri.scheme !== 'file') {
    void vscode.window.showWarningMessage('agenttools: open a folder first.');
    return undefined;
  }
  return folder.uri.fsPath;
}

function show(channel: vscode.OutputChannel, lines: string[]): void {
  channel.clear();
  for (const line of lines) channel.appendLine(line);
  channel.show(true);
}

export function activate(context: vscode.ExtensionContext): void {
  const channel = vscode.window.createOutputChannel('agenttools');
  context.subscriptions.push(channel);

  context.subscriptions.push(vscode.commands.registerCommand('agenttools.grep', async () => {
    const root = workspaceRoot();
    if (root === undefined) return;
    const pattern = await vscode.window.showInputBox({ prompt: 'Grep pattern (a regular expression)' });
    if (!pattern) return;
    try {
      show(channel, (await grepWorkspace(root, pattern)).lines);
    } catch (e) {
      void vscode.window.showErrorMessage('agenttools: ' + (e instanceof Error ? e.message : String(e)));
    }
  }));

  context.subscriptions.push(vscode.commands.registerCommand('agenttools.reviewPreview', async () => {
    const root = workspaceRoot();
    if (root === undefined) return;
    const config = vscode.workspace.getConfiguration('agenttools');
    try {
      const report = await reviewPreview(root, {
        agtReview: config.get<string>('agtReviewPath', 'agt-review'),
        from: config.get<string>('reviewFrom', '') || undefined,
      });
      show(channel, report.lines);
    } catch (e) {
      void vscode.window.showErrorMessage('agenttools: ' + (e instanceof Error ? e.message : String(e)));
    }
  }));
}

export function deactivate(): void {
  // nothing to release: every call closes its own handles
}
