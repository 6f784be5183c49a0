// Log: every moderation action, newest first.
import { h, table, when } from './dom.js';

export async function log({ get, show }) {
  const { entries } = await get('/api/moderation/log?limit=100');
  const rows = entries.map((entry) => [
    when(entry.created_at), entry.moderator?.username ?? '(deleted)', entry.action,
    entry.target ? `${entry.target.type} ${entry.target.id ?? ''}` : '', entry.note ?? '',
  ]);
  show(h('h1', {}, 'Log'), table('Moderation log, newest first', ['When', 'Who', 'Action', 'Target', 'Note'], rows));
}
