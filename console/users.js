// Users: find someone by email, username or id; their account, profile, sessions, the
// reports against them and their latest posts; suspend or unsuspend them with a note.
import { h, status, field, table, when } from './dom.js';

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
  return h('li', { class: 'person' },
    h('h2', {}, profile ? profile.username : `User ${user.id}`),
    table(`Account ${user.id}`, ['Field', 'Value'], [
      ['Email', user.email], ['Role', user.role], ['Suspended', user.suspended ? 'yes' : 'no'],
      ['Signed up', when(user.created_at)], ['Open sessions', String(found.sessions)],
      ['Reports against them', String(found.reports_against)],
      ['Full name', profile?.full_name ?? ''], ['Posts', String(profile?.posts_count ?? 0)],
      ['Followers', String(profile?.followers_count ?? 0)],
    ]),
    found.posts?.length ? h('section', {}, h('h3', {}, 'Latest posts'),
      h('ul', {}, found.posts.map((p) => h('li', {}, `${p.title} (${when(p.created_at)})`)))) : null,
    field(`Note for user ${user.id}`, note),
    h('div', { class: 'actions' }, h('button', { type: 'button', class: user.suspended ? '' : 'danger', onclick: toggle },
      user.suspended ? 'Unsuspend' : 'Suspend')),
    message);
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
      results.replaceChildren(found.length ? h('ul', { class: 'people' }, found.map((f) => person(f, context, text)))
        : status('No one found.'));
    } catch (error) {
      results.replaceChildren(status(error.message, 'error'));
    }
  }
  context.show(h('h1', {}, 'Users'), form, results);
  if (query) await find(query);
}
