// tlog-peer: Go's golang.org/x/mod/sumdb (tlog and note) as the reference peer of Rampart's
// TransparencyLog module. Reads one JSON request on standard input, writes one JSON answer.
//
//	check: {"leaves": [base64...], "roots": {"<size>": "<base64>"},
//	        "inclusion": [{"index": i, "size": n, "proof": [base64...]}],
//	        "consistency": [{"old": m, "new": n, "proof": [base64...]}],
//	        "note": "<signed note>", "verifier": "<name+hash+key>"}
//	  -> {"roots": {"<size>": bool}, "inclusion": [bool], "consistency": [bool],
//	      "goInclusion": [[base64...]], "goConsistency": [[base64...]], "note": "ok"|"<error>"}
//	sign: {"name": "...", "text": "..."} -> {"verifier": "...", "note": "..."}
//	bench: {"count": N, "lookups": L} -> {"appendNs": ns per leaf appended (stored hashes),
//	        "lookupNs": ns per inclusion proof made and checked, "root": base64}
//	  (the baseline of `rampart-dev bench keylog`: leaf i is "key change i", lookup j proves
//	   leaf (j * 7919) % N in the tree of N leaves)
package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type proofCase struct {
	Index int64    `json:"index"`
	Size  int64    `json:"size"`
	Old   int64    `json:"old"`
	New   int64    `json:"new"`
	Proof []string `json:"proof"`
}

type request struct {
	Mode        string            `json:"mode"`
	Leaves      []string          `json:"leaves"`
	Roots       map[string]string `json:"roots"`
	Inclusion   []proofCase       `json:"inclusion"`
	Consistency []proofCase       `json:"consistency"`
	Note        string            `json:"note"`
	Verifier    string            `json:"verifier"`
	Name        string            `json:"name"`
	Count       int64             `json:"count"`
	Lookups     int64             `json:"lookups"`
	Text        string            `json:"text"`
}

func hashes(list []string) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(list))
	for i, s := range list {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil || len(b) != 32 {
			return nil, fmt.Errorf("bad hash %q", s)
		}
		copy(out[i][:], b)
	}
	return out, nil
}

func encode(list []tlog.Hash) []string {
	out := make([]string, len(list))
	for i, h := range list {
		out[i] = base64.StdEncoding.EncodeToString(h[:])
	}
	return out
}

// mustHashes is hashes for a request's proof: a malformed one ends the peer.
func mustHashes(list []string) []tlog.Hash {
	out, err := hashes(list)
	if err != nil {
		fail(err)
	}
	return out
}

// encodeOwn encodes a proof Go made; failing to make it ends the peer.
func encodeOwn(proof []tlog.Hash, err error) []string {
	if err != nil {
		fail(err)
	}
	return encode(proof)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "tlog-peer:", err)
	os.Exit(1)
}

func main() {
	var req request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fail(err)
	}
	answer := map[string]interface{}{}
	switch req.Mode {
	case "sign":
		skey, vkey, err := note.GenerateKey(rand.Reader, req.Name)
		if err != nil {
			fail(err)
		}
		signer, err := note.NewSigner(skey)
		if err != nil {
			fail(err)
		}
		msg, err := note.Sign(&note.Note{Text: req.Text}, signer)
		if err != nil {
			fail(err)
		}
		answer["verifier"] = vkey
		answer["note"] = string(msg)
	case "check":
		// Go's own stored hashes of the same leaves.
		var stored []tlog.Hash
		for i, leaf := range req.Leaves {
			data, err := base64.StdEncoding.DecodeString(leaf)
			if err != nil {
				fail(err)
			}
			more, err := tlog.StoredHashes(int64(i), data, tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
				out := make([]tlog.Hash, len(idx))
				for j, x := range idx {
					out[j] = stored[x]
				}
				return out, nil
			}))
			if err != nil {
				fail(err)
			}
			stored = append(stored, more...)
		}
		reader := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
			out := make([]tlog.Hash, len(idx))
			for j, x := range idx {
				out[j] = stored[x]
			}
			return out, nil
		})
		treeHash := func(n int64) tlog.Hash {
			h, err := tlog.TreeHash(n, reader)
			if err != nil {
				fail(err)
			}
			return h
		}
		roots := map[string]bool{}
		for size, root := range req.Roots {
			n, _ := strconv.ParseInt(size, 10, 64)
			h := treeHash(n)
			roots[size] = base64.StdEncoding.EncodeToString(h[:]) == root
		}
		answer["roots"] = roots
		var inclusion []bool
		var goInclusion [][]string
		for _, c := range req.Inclusion {
			leaf, _ := base64.StdEncoding.DecodeString(req.Leaves[c.Index])
			inclusion = append(inclusion, tlog.CheckRecord(mustHashes(c.Proof), c.Size, treeHash(c.Size), c.Index, tlog.RecordHash(leaf)) == nil)
			goInclusion = append(goInclusion, encodeOwn(tlog.ProveRecord(c.Size, c.Index, reader)))
		}
		answer["inclusion"] = inclusion
		answer["goInclusion"] = goInclusion
		var consistency []bool
		var goConsistency [][]string
		for _, c := range req.Consistency {
			consistency = append(consistency, tlog.CheckTree(mustHashes(c.Proof), c.New, treeHash(c.New), c.Old, treeHash(c.Old)) == nil)
			goConsistency = append(goConsistency, encodeOwn(tlog.ProveTree(c.New, c.Old, reader)))
		}
		answer["consistency"] = consistency
		answer["goConsistency"] = goConsistency
		if req.Note != "" {
			verifier, err := note.NewVerifier(req.Verifier)
			if err != nil {
				answer["note"] = err.Error()
			} else if n, err := note.Open([]byte(req.Note), note.VerifierList(verifier)); err != nil {
				answer["note"] = err.Error()
			} else {
				answer["note"] = "ok"
				answer["noteText"] = n.Text
			}
		}
	case "bench":
		var stored []tlog.Hash
		reader := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
			out := make([]tlog.Hash, len(idx))
			for j, x := range idx {
				out[j] = stored[x]
			}
			return out, nil
		})
		start := time.Now()
		for i := int64(0); i < req.Count; i++ {
			more, err := tlog.StoredHashes(i, []byte(fmt.Sprintf("key change %d", i)), reader)
			if err != nil {
				fail(err)
			}
			stored = append(stored, more...)
		}
		appendNs := time.Since(start).Nanoseconds() / req.Count
		root, err := tlog.TreeHash(req.Count, reader)
		if err != nil {
			fail(err)
		}
		start = time.Now()
		for j := int64(0); j < req.Lookups; j++ {
			index := (j * 7919) % req.Count
			proof, err := tlog.ProveRecord(req.Count, index, reader)
			if err != nil {
				fail(err)
			}
			leaf := tlog.RecordHash([]byte(fmt.Sprintf("key change %d", index)))
			if err := tlog.CheckRecord(proof, req.Count, root, index, leaf); err != nil {
				fail(err)
			}
		}
		answer["appendNs"] = appendNs
		answer["lookupNs"] = time.Since(start).Nanoseconds() / req.Lookups
		answer["root"] = base64.StdEncoding.EncodeToString(root[:])
	default:
		fail(fmt.Errorf("unknown mode %q", req.Mode))
	}
	if err := json.NewEncoder(os.Stdout).Encode(answer); err != nil {
		fail(err)
	}
}
