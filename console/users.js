// Users: find someone by email, username or id; their account, profile, latest posts, live
// sessions and the reports against them; suspend or unsuspend them with a note.
import { h, status, field, table, when } from './dom.js';

const PAGE = 20;
const resolutions = { dismiss: 'dismissed', remove: 'content removed', suspend: 'author suspended' };

function reportItem(report) {
  const reason = report.reason.replace(/_/g, ' ');
  const state = report.status === 'open' ? 'open'
    : `resolved${report.action ? `, ${resolutions[report.action] ?? report.action}` : ''}${report.resolved_at ? ` ${when(report.resolved_at)}` : ''}`;
  const on = report.target?.type === 'user' ? 'them' : `their ${report.target?.type ?? 'content'} ${report.target?.id ?? ''}`;
  return h('li', {},
    h('h4', {}, `Report ${report.id}: ${reason} (${state})`),
    h('p', { class: 'meta' }, `By ${report.reporter?.username ?? 'someone without a profile'}, ${when(report.created_at)}, on ${on}`),
    report.details ? h('blockquote', {}, report.details) : null);
}

// Times wrap between their words only (a narrow screen gives the device the rest).
function sessionRow(session) {
  return h('tr', {}, h('td', {}, session.device_id ?? '(no device named)'),
    h('td', { class: 'time' }, when(session.created_at)), h('td', { class: 'time' }, when(session.last_used_at)));
}

// A section listing a page of `path` at a time, newest first, with a button for the next
// page: `aria-busy` while a page loads (the browser tests wait for it to go).
function paged({ get }, { title, path, key, empty, more: moreLabel, container, add }) {
  const heading = h('h3', { tabindex: '-1' }, title);
  const message = h('div', { 'aria-live': 'polite' });
  const section = h('section', { class: 'record', 'aria-busy': 'true' }, heading, message);
  let shown = 0;
  let next = null;
  let loading = false;
  async function load(cursor) {
    if (loading) return;
    loading = true;
    section.setAttribute('aria-busy', 'true');
    try {
      const page = await get(`${path}?limit=${PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      shown += page[key].length;
      add(page[key]);
      if (!shown) message.replaceChildren(status(empty));
      else if (!container.isConnected) section.insertBefore(container, message);
      next = page.next_cursor;
      if (next && !more.isConnected) section.append(more);
      if (!next && more.isConnected) {
        more.remove();
        heading.focus();  // the button pressed is gone: the keyboard stays in the section
      }
    } catch (error) {
      message.replaceChildren(status(error.message, 'error'));
    } finally {
      loading = false;
      section.removeAttribute('aria-busy');
    }
  }
  const more = h('button', { type: 'button', class: 'more', onclick: () => load(next) }, moreLabel);
  return { section, loaded: load(null) };
}

function sessions(context, user) {
  const list = table(`Live sessions of user ${user.id}, newest first`, ['Device', 'Signed in', 'Last used'], []);
  list.classList.add('sessions');
  const body = list.querySelector('tbody');
  return paged(context, {
    title: 'Sessions', path: `/api/moderation/users/${user.id}/sessions`, key: 'sessions',
    empty: 'No live sessions.', more: 'Show more sessions', container: list,
    add: (found) => body.append(...found.map(sessionRow)),
  });
}

function reportsAgainst(context, user, count) {
  const list = h('ul', { class: 'against' });
  return paged(context, {
    title: `Reports against them (${count})`, path: `/api/moderation/users/${user.id}/reports`, key: 'reports',
    empty: 'No reports against them.', more: 'Show more reports', container: list,
    add: (found) => list.append(...found.map(reportItem)),
  });
}

function person(found, context, query) {
  const note = h('textarea', { name: 'note', rows: '2', maxlength: '1000' });
  const message = h('div', { 'aria-live': 'polite' });
  const { user, profile } = found;
  const toggle = async () => {
    try {
      await context.post(`/api/moderation/users/${user.id}/${user.suspended ? 'unsuspend' : 'suspend'}`,
        { note: note.value || undefined });
      await users(context, query);
    } catch (error) {
      message.replaceChildren(status(error.message, 'error'));
    }
  };
  const records = [sessions(context, user), reportsAgainst(context, user, found.reports_against)];
  const card = h('li', { class: 'person' },
    h('h2', {}, profile ? profile.username : `User ${user.id}`),
    table(`Account ${user.id}`, ['Field', 'Value'], [
      // A remote account has no email of its own (README "Federation").
      profile?.remote ? ['Account', `remote: ${profile.acct}`] : ['Email', user.email],
      ['Role', user.role], ['Suspended', user.suspended ? 'yes' : 'no'],
      ['Signed up', when(user.created_at)],
      ['Full name', profile?.full_name ?? ''], ['Posts', String(profile?.posts_count ?? 0)],
      ['Followers', String(profile?.followers_count ?? 0)],
    ]),
    found.posts?.length ? h('section', { class: 'record' }, h('h3', {}, 'Latest posts'),
      h('ul', {}, found.posts.map((p) => h('li', {}, `${p.title} (${when(p.created_at)})`)))) : null,
    records.map((record) => record.section),
    field(`Note for user ${user.id}`, note),
    h('div', { class: 'actions' }, h('button', { type: 'button', class: user.suspended ? '' : 'danger', onclick: toggle },
      user.suspended ? 'Unsuspend' : 'Suspend')),
    message);
  return { card, loaded: Promise.all(records.map((record) => record.loaded)) };
}

export async function users(context, query = '') {
  const input = h('input', { type: 'search', name: 'q', value: query, required: true });
  const results = h('div', { 'aria-live': 'polite' });
  const form = h('form', {
    role: 'search',
    onsubmit: async (event) => {
      event.preventDefault();
      await find(input.value.trim());
    },
  }, field('Email, username or id', input), h('button', { type: 'submit' }, 'Find'));
  async function find(text) {
    if (!text) return;
    try {
      const { users: found } = await context.get(`/api/moderation/users?q=${encodeURIComponent(text)}`);
      const people = found.map((f) => person(f, context, text));
      results.replaceChildren(people.length ? h('ul', { class: 'people' }, people.map((p) => p.card))
        : status('No one found.'));
      await Promise.all(people.map((p) => p.loaded));
    } catch (error) {
      results.replaceChildren(status(error.message, 'error'));
    }
  }
  context.show(h('h1', {}, 'Users'), form, results);
  if (query) await find(query);
}
