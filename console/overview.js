// Overview: totals and the last day's, the dependencies' health, the job queues, the version.
import { h, table } from './dom.js';

export async function overview({ get, show }) {
  const { overview: o } = await get('/api/moderation/overview');
  const counts = ['users', 'posts', 'comments', 'reports'].map((name) => [
    name, String(o.counts[name].total), String(o.counts[name].last_24h),
  ]);
  const health = Object.entries(o.health).map(([name, value]) => [name, h('span', { class: `health ${value}` }, value)]);
  const queues = Object.entries(o.queues).map(([kind, value]) => [kind, String(value.queued), String(value.dead)]);
  show(
    h('h1', {}, 'Overview'),
    h('p', {}, `posts-server ${o.version}`),
    table('Totals', ['What', 'All', 'Last 24 hours'], counts),
    table('Health', ['Part', 'State'], health),
    table('Background jobs', ['Kind', 'Queued', 'Dead'], queues.length ? queues : [['none', '0', '0']]),
  );
}
