// Building the page from data: elements and text nodes only (never HTML from strings), so
// nothing a user wrote can become markup, and nothing needs an inline script or style.
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith('on')) element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

export function show(...children) {
  const main = document.getElementById('main');
  main.replaceChildren(...children);
}

export function status(message, kind = 'info') {
  return h('p', { class: `status ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, message);
}

export function when(text) {
  if (!text) return '';
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? text : date.toLocaleString();
}

// A labelled field: a label tied to its input by id.
let fields = 0;
export function field(label, input) {
  const id = input.id || `field-${++fields}`;
  input.id = id;
  return h('div', { class: 'field' }, h('label', { for: id }, label), input);
}

export function table(caption, headings, rows) {
  return h('table', {},
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, headings.map((heading) => h('th', { scope: 'col' }, heading)))),
    h('tbody', {}, rows.map((cells) => h('tr', {}, cells.map((cell) => h('td', {}, cell))))));
}
