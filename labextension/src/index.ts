// ragtt in JupyterLab: the "RAG history" sidebar, widgets in main-area tabs (restored on
// reload), "Insert in notebook", palette commands, settings, and the sidebar following a
// notebook's kernel after `%ragtt open PATH` (the magic publishes a display message of
// PROJECT_MIME on IOPub; the sidebar listens to the notebooks' IOPub, never polls a kernel),
// and listing a project again after a magic wrote to it (CHANGED_MIME, the same way).
import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette, InputDialog, WidgetTracker } from '@jupyterlab/apputils';
import { INotebookTracker, NotebookActions, NotebookPanel } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';

import { Api, Listing } from './api';
import { HistoryPanel } from './sidebar';
import { RagttTab, TabSpec, specKey } from './tab';

const PLUGIN = 'ragtt:plugin';
const PROJECT_MIME = 'application/vnd.ragtt.project+json';
const CHANGED_MIME = 'application/vnd.ragtt.changed+json'; // ragtt_nb.magics.CHANGED_MIME
const CMD = {
  history: 'ragtt:open-history',
  replay: 'ragtt:replay-query',
  diffNow: 'ragtt:diff-with-now',
  insert: 'ragtt:insert-in-notebook',
  open: 'ragtt:open-widget',
};

function activate(
  app: JupyterFrontEnd,
  notebooks: INotebookTracker | null,
  restorer: ILayoutRestorer | null,
  palette: ICommandPalette | null,
  registry: ISettingRegistry | null,
): void {
  const api = new Api();
  const tabs = new WidgetTracker<RagttTab>({ namespace: 'ragtt' });

  const insert = (line: string): void => {
    const panel = notebooks?.currentWidget;
    if (!panel) {
      panel_say(`No notebook is open: ${line}`);
      return;
    }
    const notebook = panel.content;
    NotebookActions.insertBelow(notebook);
    notebook.activeCell?.model.sharedModel.setSource(line);
    app.shell.activateById(panel.id);
  };

  // Every tab opens through the one command (the sidebar, the palette, a restore alike), and
  // the command resolves only once the tracker holds the tab: the layout restorer names a tab
  // when the tracker has saved it, and rebuilds the main area once the restoring commands
  // resolved, so a command that returned sooner let a restored tab drop out of the layout.
  const openTab = async (spec: TabSpec): Promise<RagttTab> => {
    const existing = tabs.find((t) => specKey(t.spec) === specKey(spec));
    if (existing) {
      if (!existing.isAttached) app.shell.add(existing, 'main'); // a layout restored without it left it detached
      app.shell.activateById(existing.id);
      return existing;
    }
    const tab = new RagttTab(api, spec, insert, (t) => void tabs.save(t));
    app.shell.add(tab, 'main');
    app.shell.activateById(tab.id);
    await tabs.add(tab);
    return tab;
  };
  const open = (project: string, widget: string, args: Record<string, string>, about?: string): Promise<unknown> =>
    app.commands.execute(CMD.open, { project, widget, args, ...(about ? { about } : {}) });

  const replay = (project: string, queryId: string) =>
    api.project<{ query_id: string; text: string }>(project, 'replay', {
      method: 'POST', body: JSON.stringify({ query_id: queryId, generate: false }),
    });

  const panel = new HistoryPanel(api, {
    open: (project, widget, args, about) =>
      void open(project, widget, args, about).catch((err) => panel.say(String(err), true)),
    // "now": the same text replayed as of the newest version (a plain replay reruns the old one),
    // with its answer: the diff compares answers, and would otherwise log a second replay (of
    // this one) to generate it
    diffWithNow: async (project, queryId, text, latest, about) => {
      const now = await api.project<{ query_id: string }>(project, 'replay/as-of', {
        method: 'POST', body: JSON.stringify({ text, at: latest, generate: true }),
      });
      panel.changed(project); // the list shows the replay under the query it asked again
      await open(project, 'chunk_diff', { left: queryId, right: now.query_id }, about);
    },
  });
  const panel_say = (text: string) => panel.say(text, true);
  app.shell.add(panel, 'left', { rank: 600 });

  app.commands.addCommand(CMD.history, {
    label: 'ragtt: Open history',
    execute: () => app.shell.activateById(panel.id),
  });
  app.commands.addCommand(CMD.open, {
    label: 'ragtt: Open a widget',
    execute: (args) => {
      const { project, widget, args: given, about, view } = args as Partial<TabSpec>;
      if (typeof project !== 'string' || typeof widget !== 'string' || typeof given !== 'object' || given === null
        || (about !== undefined && typeof about !== 'string')
        || (view !== undefined && (typeof view !== 'object' || view === null || Array.isArray(view)))) {
        throw new Error(`${CMD.open} takes {project, widget, args, about?, view?}; got ${JSON.stringify(args)}`);
      }
      return openTab({ project, widget, args: given, ...(about ? { about } : {}), ...(view ? { view } : {}) });
    },
  });
  app.commands.addCommand(CMD.replay, {
    label: 'ragtt: Replay query...',
    isEnabled: () => !panel.readOnly,
    execute: async () => {
      const id = await InputDialog.getText({ title: 'Replay which query? (its id)', text: panel.current() ?? '' });
      if (!id.button.accept || !id.value) return;
      try {
        const run = await replay(panel.project, id.value.trim());
        await panel.reload();
        await open(panel.project, 'timeline', { query_id: run.query_id }, run.text);
      } catch (err) {
        panel.say(String(err), true);
      }
    },
  });
  app.commands.addCommand(CMD.diffNow, {
    label: 'ragtt: Diff with now',
    isEnabled: () => !panel.readOnly,
    execute: () => panel.diffWithNow().catch((err) => panel.say(String(err), true)),
  });
  app.commands.addCommand(CMD.insert, {
    label: 'ragtt: Insert in notebook',
    execute: (args) => {
      const line = typeof args.line === 'string' ? args.line : tabs.currentWidget?.line;
      if (line) insert(line);
    },
  });
  if (palette) {
    for (const command of [CMD.history, CMD.replay, CMD.diffNow, CMD.insert]) palette.addItem({ command, category: 'ragtt' });
  }
  if (restorer) {
    restorer.add(panel, 'ragtt-history');
    void restorer.restore(tabs, {
      command: CMD.open,
      args: (tab) => ({ ...tab.spec }) as any,
      name: (tab) => specKey(tab.spec),
    });
  }

  // Follow the kernel: `%ragtt open PATH` publishes PROJECT_MIME with the folder's path; a
  // magic that wrote to a project (query, replay, ingest, eval...) updates a display of
  // CHANGED_MIME with its path, and the sidebar lists that project again if it shows it.
  const located = new Map<string, Promise<Listing>>(); // a kernel's path -> where it is under the root
  const locate = (path: string): Promise<Listing> => {
    let found = located.get(path);
    if (!found) {
      found = api.request<Listing>(`projects?locate=${encodeURIComponent(path)}`);
      located.set(path, found);
      found.catch(() => located.delete(path));
    }
    return found;
  };
  const follow = (nb: NotebookPanel) => {
    nb.sessionContext.iopubMessage.connect((_, msg) => {
      const content = msg.content as { data?: Record<string, unknown> };
      const opened = content?.data?.[PROJECT_MIME] as { path?: string } | undefined;
      const changed = content?.data?.[CHANGED_MIME] as { path?: string } | undefined;
      if (opened?.path) {
        const path = opened.path;
        void locate(path).then((found) => {
          if (found.located) void panel.refresh(found.located);
          else panel.say(`The kernel opened ${path}, outside this server's root.`, true);
        });
      } else if (changed?.path) {
        void locate(changed.path).then((found) => { if (found.located) panel.changed(found.located); }, () => undefined);
      }
    });
  };
  notebooks?.widgetAdded.connect((_, nb) => follow(nb));
  notebooks?.forEach(follow);

  const start = (defaultProject: string) =>
    app.restored.then(() => panel.refresh(defaultProject)).catch((err) => panel.say(String(err), true));
  if (registry) {
    void registry.load(PLUGIN).then((settings) => {
      const apply = () => {
        api.readOnly = settings.get('readOnly').composite as boolean;
        panel.readOnly = api.readOnly;
        app.commands.notifyCommandChanged(); // the replaying commands' enabled state
      };
      apply();
      settings.changed.connect(apply);
      void start(settings.get('defaultProject').composite as string);
    }, () => void start(''));
  } else {
    void start('');
  }
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN,
  description: 'ragtt: the RAG history sidebar, widgets in tabs, and the server extension\'s client.',
  autoStart: true,
  optional: [INotebookTracker, ILayoutRestorer, ICommandPalette, ISettingRegistry],
  activate,
};

export default plugin;
