<?php

/**
 * One-click connect for the private mail functions extension.
 *
 * For the user logged in to Roundcube, the extension's background asks this
 * plugin (POST ?_task=mail&_action=plugin.pmf_connect, with Roundcube's
 * request token in X-Roundcube-Request like Roundcube's own AJAX calls). Only
 * a request whose Origin is the extension's own is answered: a script on
 * Roundcube's pages (an injected one, another plugin's) can read the request
 * token and send the cookie, but not that Origin, so it cannot get a token.
 * The plugin asks provider-server for a fresh token for that user over its
 * server-to-server endpoint (POST /webmail/token, authenticated with the
 * shared secret, which never reaches the browser) and answers
 * {provider, token}: the extension connects to that provider with that token.
 * The IMAP login is sent as the user; provider-server maps it to its user as
 * its LMTP stage maps recipients. The provider rate-limits issuance; both
 * sides log it without the token.
 *
 * Settings (config.inc.php.dist): pmf_connect_provider_url, pmf_connect_secret,
 * optionally pmf_connect_api_url and pmf_connect_extension_origins.
 */
class pmf_connect extends rcube_plugin
{
    public $task = 'mail';

    /** What provider-server's answer may be read up to (a token is ~50 bytes). */
    private const MAX_ANSWER_BYTES = 8192;

    public function init()
    {
        $this->load_config();
        $this->register_action('plugin.pmf_connect', [$this, 'issue_token']);
        $rcmail = rcmail::get_instance();
        // Tells the extension, on the mailbox view only, that it may offer one-click connect here.
        if (empty($rcmail->action) && !$rcmail->output->ajax_call && $this->provider_url() !== null) {
            $rcmail->output->set_env('pmf_connect', 'available');
        }
    }

    /** Answers the extension: {provider, token} for the logged-in user, or {error}. */
    public function issue_token()
    {
        $rcmail = rcmail::get_instance();
        // Roundcube passes a POST without parameters unchecked: require its request token here.
        $sent = rcube_utils::request_header('X-Roundcube-Request');
        if ($_SERVER['REQUEST_METHOD'] !== 'POST' || !is_string($sent) || !hash_equals($rcmail->get_request_token(), $sent)) {
            $this->reply(403, ['error' => 'Invalid request: reload the page.']);
        }
        if (!$this->from_extension()) {
            rcube::write_log('pmf_connect', 'no token: the request did not come from the extension');
            $this->reply(403, ['error' => 'Only the extension may ask for a token.']);
        }
        $provider = $this->provider_url();
        $api = $this->server_url($rcmail->config->get('pmf_connect_api_url') ?: $provider);
        $secret = (string) $rcmail->config->get('pmf_connect_secret', '');
        if ($provider === null || $api === null || $secret === '') {
            $this->reply(503, ['error' => 'One-click connect is not set up on this webmail.']);
        }
        $user = (string) $rcmail->get_user_name();
        [$status, $token] = $this->ask_provider($api, $secret, $user);
        if ($token !== null) {
            rcube::write_log('pmf_connect', "token issued for user $user");
            $this->reply(200, ['provider' => $provider, 'token' => $token]);
        }
        rcube::write_log('pmf_connect', "no token for user $user: provider answered HTTP $status");
        $this->reply($status === 429 ? 429 : 502, [
            'error' => $status === 429
                ? 'Too many connections this minute; try again in a minute.'
                : 'Your provider did not issue a token; ask your provider.',
        ]);
    }

    /**
     * Whether the request comes from the extension's background: its Origin
     * (which browsers set and no page script can) is an extension's, one of
     * pmf_connect_extension_origins when that list is set.
     */
    private function from_extension()
    {
        $origin = isset($_SERVER['HTTP_ORIGIN']) ? (string) $_SERVER['HTTP_ORIGIN'] : '';
        $allowed = (array) rcmail::get_instance()->config->get('pmf_connect_extension_origins', []);
        if (!empty($allowed)) {
            return in_array($origin, $allowed, true);
        }
        return (bool) preg_match('#^(chrome-extension|moz-extension)://[A-Za-z0-9-]{1,64}$#', $origin);
    }

    /** [HTTP status, token or null] from provider-server's POST /webmail/token. */
    private function ask_provider($api, $secret, $user)
    {
        $context = stream_context_create([
            'http' => [
                'method' => 'POST',
                'header' => "Authorization: Bearer $secret\r\nContent-Type: application/json\r\n",
                'content' => json_encode(['user' => $user]),
                'timeout' => 10,
                'ignore_errors' => true,  // read the status of a refusal too
                'follow_location' => 0,   // the secret goes to the configured address only
            ],
            'ssl' => ['verify_peer' => true, 'verify_peer_name' => true],
        ]);
        $body = @file_get_contents("$api/webmail/token", false, $context, 0, self::MAX_ANSWER_BYTES);
        $status = 0;
        if (isset($http_response_header[0]) && preg_match('#^HTTP/\S+ (\d{3})#', $http_response_header[0], $m)) {
            $status = (int) $m[1];
        }
        $answer = is_string($body) ? json_decode($body, true) : null;
        $token = is_array($answer) ? ($answer['token'] ?? null) : null;
        $ok = $status === 200 && is_string($token) && preg_match('/^[\x21-\x7e]{1,4096}$/', $token);
        return [$status, $ok ? $token : null];
    }

    /** The provider's origin the extension connects to, or null when unset or not a safe address. */
    private function provider_url()
    {
        return $this->server_url(rcmail::get_instance()->config->get('pmf_connect_provider_url'));
    }

    /**
     * scheme://host[:port] of a configured address: https, or http on loopback only
     * (the token, and the secret to the API address, must not travel in clear text).
     */
    private function server_url($url)
    {
        $p = is_string($url) ? parse_url($url) : false;
        if (!is_array($p) || empty($p['scheme']) || empty($p['host']) || isset($p['user']) || isset($p['pass'])) {
            return null;
        }
        $scheme = strtolower($p['scheme']);
        $loopback = in_array(strtolower($p['host']), ['127.0.0.1', 'localhost', '[::1]'], true);
        if ($scheme !== 'https' && !($scheme === 'http' && $loopback)) {
            return null;
        }
        return $scheme . '://' . strtolower($p['host']) . (isset($p['port']) ? ':' . (int) $p['port'] : '');
    }

    /** Sends a JSON answer and ends the request. */
    private function reply($status, $body)
    {
        http_response_code($status);
        header('Content-Type: application/json');
        header('Cache-Control: no-store');
        header('X-Content-Type-Options: nosniff');
        echo json_encode($body);
        exit;
    }
}
