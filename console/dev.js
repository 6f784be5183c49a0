// Development pages (trust mode only): the outbox's mail, demo content and a clean slate,
// and `/api/events` as it arrives.
import { h, status, field, when } from './dom.js';

export async function mailbox({ get, state, show }) {
  const email = h('input', { type: 'email', name: 'email', value: state.email, required: true });
  const list = h('div', { 'aria-live': 'polite' });
  async function load() {
    if (!email.value) return;
    state.email = email.value.trim();
    const { messages } = await get(`/api/dev/mailbox?email=${encodeURIComponent(state.email)}`);
    list.replaceChildren(messages.length
      ? h('ul', { class: 'mail' }, messages.map((m) => h('li', {},
        h('h2', {}, m.subject), h('p', { class: 'meta' }, `To ${m.to}, ${when(m.created_at)}`), h('pre', {}, m.body))))
      : status('No mail for this address.'));
  }
  show(h('h1', {}, 'Mailbox'),
    h('form', { onsubmit: async (event) => { event.preventDefault(); await load(); } },
      field('Address', email), h('button', { type: 'submit' }, 'Show mail')),
    list);
  await load();
}

export async function seed({ post, show }) {
  const usersInput = h('input', { type: 'number', name: 'users', min: '0', max: '1000', value: '10' });
  const postsInput = h('input', { type: 'number', name: 'posts', min: '0', max: '10000', value: '50' });
  const message = h('div', { 'aria-live': 'polite' });
  const run = (what) => async (event) => {
    event.preventDefault();
    try {
      if (what === 'reset' && !window.confirm('Empty every table and the uploads?')) return;
      const answer = what === 'seed'
        ? await post('/api/dev/seed', { users: Number(usersInput.value), posts: Number(postsInput.value) })
        : await post('/api/dev/reset');
      message.replaceChildren(status(what === 'seed'
        ? `Seeded ${answer.users} users, ${answer.posts} posts, ${answer.likes} likes, ${answer.comments} comments.`
        : 'Everything was removed.'));
    } catch (error) {
      message.replaceChildren(status(error.message, 'error'));
    }
  };
  show(h('h1', {}, 'Seed and reset'),
    h('form', { onsubmit: run('seed') }, field('Users', usersInput), field('Posts', postsInput),
      h('button', { type: 'submit' }, 'Seed')),
    h('form', { onsubmit: run('reset') }, h('button', { type: 'submit', class: 'danger' }, 'Reset everything')),
    message);
}

// A stream read with fetch (EventSource cannot send the token), until the page changes. The
// page is drawn once the stream is open; its events are read on after that (a page's
// render ends, or the console would wait for it forever).
export async function events({ show }) {
  const list = h('ol', { class: 'events', 'aria-live': 'polite' });
  const controller = new AbortController();
  window.addEventListener('hashchange', () => controller.abort(), { once: true });
  const response = await fetch('/api/events', { headers: { Accept: 'text/event-stream' }, signal: controller.signal });
  if (!response.ok) throw new Error(`The stream answered HTTP ${response.status}.`);
  const message = h('div', { 'aria-live': 'polite' });
  show(h('h1', {}, 'Live events'), h('p', {}, 'Changes as they happen, newest last.'), list, message);
  read(response.body.pipeThrough(new TextDecoderStream()).getReader(), list)
    .catch((error) => { if (error.name !== 'AbortError') message.replaceChildren(status(error.message, 'error')); });
}

async function read(reader, list) {
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = frame.split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trim()).join('\n');
      if (data) list.append(h('li', {}, h('code', {}, data)));
      while (list.childElementCount > 200) list.firstElementChild.remove();
    }
  }
}
