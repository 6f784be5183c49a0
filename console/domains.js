// Domains (admins; README "Federation"): the fediverse servers blocked or silenced here,
// blocking or silencing another with a note, and lifting one.
import { h, status, field, table, when } from './dom.js';

export async function domains({ get, put, remove, show }) {
  const domain = h('input', { type: 'text', name: 'domain', required: true, maxlength: '253', placeholder: 'mastodon.example' });
  const action = h('select', { name: 'action' }, h('option', { value: 'block' }, 'Block'), h('option', { value: 'silence' }, 'Silence'));
  const note = h('textarea', { name: 'note', rows: '2', maxlength: '1000' });
  const message = h('div', { 'aria-live': 'polite' });
  const list = h('div', {});
  const path = (name) => `/api/moderation/domains/${encodeURIComponent(name)}`;
  async function act(work, done) {
    try {
      await work();
      message.replaceChildren(status(done));
      await load();
    } catch (error) {
      message.replaceChildren(status(error.message, 'error'));
    }
  }
  async function load() {
    const { domains: listed } = await get('/api/moderation/domains');
    list.replaceChildren(listed.length
      ? table('Blocked and silenced domains', ['Domain', 'Action', 'Since', 'Note', 'Lift'], listed.map((entry) => [
        entry.domain, entry.action === 'block' ? 'blocked' : 'silenced', when(entry.created_at), entry.note,
        h('button', {
          type: 'button', 'aria-label': `Lift the ${entry.action} of ${entry.domain}`,
          onclick: () => act(() => remove(path(entry.domain)), `Lifted the ${entry.action} of ${entry.domain}.`),
        }, 'Lift'),
      ]))
      : status('No domain is blocked or silenced.'));
  }
  show(h('h1', {}, 'Domains'),
    h('p', {}, 'Blocked: nothing of the domain is fetched, stored or accepted, and what waits to be delivered there goes. ',
      'Silenced: its accounts’ replies and likes reach only people who follow them. Remote accounts show as user@domain.'),
    h('form', {
      onsubmit: (event) => {
        event.preventDefault();
        const name = domain.value.trim().toLowerCase();
        act(() => put(path(name), { action: action.value, note: note.value || undefined }),
          `${action.value === 'block' ? 'Blocked' : 'Silenced'} ${name}.`);
      },
    }, field('Domain', domain), field('Action', action), field('Note', note), h('button', { type: 'submit' }, 'Save')),
    message, list);
  await load();
}
