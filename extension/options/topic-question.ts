// The topic question of the provider's connect forms (sign-in and access
// token) is defined once, in options.html's #topic-question template: each
// form marked data-topic-question gets its own copy (its own radios, its own
// required answer) before its Connect button. Imported first by the page's
// script, so the copies are in place before anything fills in or reads the page.
const question = document.querySelector<HTMLTemplateElement>('#topic-question');
for (const form of document.querySelectorAll('form[data-topic-question]'))
  form.querySelector('button[type=submit]')?.before(question!.content.cloneNode(true));
