// tlog-vectors computes reference values for protocol/test/merkle.test.ts and
// protocol/test/signed-note.test.ts with independent implementations: Go's
// golang.org/x/mod/sumdb/tlog (RFC 6962 trees and proofs), golang.org/x/mod/sumdb/note
// (C2SP signed notes) and filippo.io/torchwood (C2SP tlog-cosignature), the
// code litewitness itself runs. It reads one JSON request on stdin and writes
// one JSON answer on stdout.
//
//	tree:   {"leaves": [hex...]} → leaf hashes, the root of every prefix, every
//	        inclusion proof and every consistency proof between prefixes
//	sign:   {"name", "seed" (hex), "text"} → the note signed with Ed25519 and,
//	        over the same text (a checkpoint), a cosignature/v1, with both vkeys
//	open:   {"note", "vkeys": [...]} → whether note.Open verifies it
package main

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type request struct {
	Leaves []string `json:"leaves"`
	Name   string   `json:"name"`
	Seed   string   `json:"seed"`
	Text   string   `json:"text"`
	Note   string   `json:"note"`
	VKeys  []string `json:"vkeys"`
}

type hashes map[int64]tlog.Hash

func (h hashes) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		v, ok := h[x]
		if !ok {
			return nil, fmt.Errorf("no stored hash %d", x)
		}
		out[i] = v
	}
	return out, nil
}

func hexes(p []tlog.Hash) []string {
	out := make([]string, len(p))
	for i, h := range p {
		out[i] = hex.EncodeToString(h[:])
	}
	return out
}

func tree(req request) (any, error) {
	stored := hashes{}
	var leafHashes, roots []string
	inclusion := map[string][]string{}
	consistency := map[string][]string{}
	for i, l := range req.Leaves {
		data, err := hex.DecodeString(l)
		if err != nil {
			return nil, err
		}
		hs, err := tlog.StoredHashes(int64(i), data, stored)
		if err != nil {
			return nil, err
		}
		for j, h := range hs {
			stored[tlog.StoredHashIndex(0, int64(i))+int64(j)] = h
		}
		leaf := tlog.RecordHash(data)
		leafHashes = append(leafHashes, hex.EncodeToString(leaf[:]))
	}
	for n := int64(1); n <= int64(len(req.Leaves)); n++ {
		root, err := tlog.TreeHash(n, stored)
		if err != nil {
			return nil, err
		}
		roots = append(roots, hex.EncodeToString(root[:]))
		for i := int64(0); i < n; i++ {
			p, err := tlog.ProveRecord(n, i, stored)
			if err != nil {
				return nil, err
			}
			inclusion[fmt.Sprintf("%d:%d", i, n)] = hexes(p)
		}
		for m := int64(1); m < n; m++ {
			p, err := tlog.ProveTree(n, m, stored)
			if err != nil {
				return nil, err
			}
			consistency[fmt.Sprintf("%d:%d", m, n)] = hexes(p)
		}
	}
	return map[string]any{"leafHashes": leafHashes, "roots": roots, "inclusion": inclusion, "consistency": consistency}, nil
}

func sign(req request) (any, error) {
	seed, err := hex.DecodeString(req.Seed)
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("seed must be 32 bytes of hex")
	}
	key := ed25519.NewKeyFromSeed(seed)
	pub := key.Public().(ed25519.PublicKey)
	// The signer key encoding of x/mod's note: PRIVATE+KEY+name+hash+base64(0x01 ‖ seed).
	h := keyHash(req.Name, append([]byte{1}, pub...))
	skey := fmt.Sprintf("PRIVATE+KEY+%s+%08x+%s", req.Name, h, base64.StdEncoding.EncodeToString(append([]byte{1}, seed...)))
	signer, err := note.NewSigner(skey)
	if err != nil {
		return nil, err
	}
	vkey := fmt.Sprintf("%s+%08x+%s", req.Name, h, base64.StdEncoding.EncodeToString(append([]byte{1}, pub...)))
	signed, err := note.Sign(&note.Note{Text: req.Text}, signer)
	if err != nil {
		return nil, err
	}
	cosigner, err := torchwood.NewCosignatureSigner(req.Name, key)
	if err != nil {
		return nil, err
	}
	cosigned, err := note.Sign(&note.Note{Text: req.Text}, cosigner)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"vkey": vkey, "note": string(signed),
		"cosignatureVkey": cosigner.Verifier().String(), "cosigned": string(cosigned),
	}, nil
}

func keyHash(name string, key []byte) uint32 {
	sum := sha256.Sum256(append([]byte(name+"\n"), key...))
	return binary.BigEndian.Uint32(sum[:4])
}

func open(req request) (any, error) {
	var vs []note.Verifier
	for _, k := range req.VKeys {
		v, err := note.NewVerifier(k)
		if err != nil {
			return map[string]any{"ok": false, "error": err.Error()}, nil
		}
		vs = append(vs, v)
	}
	n, err := note.Open([]byte(req.Note), note.VerifierList(vs...))
	if err != nil {
		return map[string]any{"ok": false, "error": err.Error()}, nil
	}
	return map[string]any{"ok": true, "text": n.Text, "verified": len(n.Sigs), "unverified": len(n.UnverifiedSigs)}, nil
}

func main() {
	var req request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	modes := map[string]func(request) (any, error){"tree": tree, "sign": sign, "open": open}
	mode, ok := modes[os.Args[len(os.Args)-1]]
	if len(os.Args) != 2 || !ok {
		fmt.Fprintln(os.Stderr, "usage: tlog-vectors tree|sign|open < request.json")
		os.Exit(2)
	}
	out, err := mode(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
