// MIME parts the mail tests put into their multipart/mixed (boundary "b") messages.

/** The last part: a.pdf, base64 of "%PDF-1.4\n", then the closing boundary. */
export const PDF_ATTACHMENT = [
  '--b',
  'Content-Type: application/pdf; name=a.pdf',
  'Content-Disposition: attachment; filename=a.pdf',
  'Content-Transfer-Encoding: base64',
  '',
  'JVBERi0xLjQK',
  '--b--',
];
