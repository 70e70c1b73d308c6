// gopenpgp-peer: GopenPGP v2 (the OpenPGP library of Proton's clients) as an interop peer for
// Rampart's OpenPGP tests. Built by the tests in GOPATH mode from Debian's
// golang-github-protonmail-gopenpgp-dev (no downloads):
//
//	GO111MODULE=off GOPATH=$TMP:/usr/share/gocode go build -o gopenpgp-peer .
//
// Keys and messages are files; a locked private key is unlocked with the passphrase in
// $GOPENPGP_PEER_PASSPHRASE. Exit status: 0 success (and a verified signature where one is
// checked), 3 the data decrypted/parsed but the signature did not verify (the reason on
// stderr), 1 any other failure, 2 usage.
//
//	gen-key NAME EMAIL PRIVATE_OUT PUBLIC_OUT   x25519 key (Ed25519 + Curve25519 subkey), armored;
//	                                            locked when $GOPENPGP_PEER_PASSPHRASE is set;
//	                                            prints the fingerprint
//	fingerprint KEY                             prints the primary key's fingerprint (lower-case hex)
//	encrypt-sign RECIPIENT_PUB SIGNER_PRIV IN   armored message on stdout (encrypted and signed)
//	decrypt-verify PRIV SIGNER_PUB IN           plaintext on stdout; stderr "SIGNATURE: verified FPR"
//	                                            or "SIGNATURE: failed: REASON" (exit 3)
//	sign-detached PRIV IN                       armored detached signature on stdout
//	verify-detached SIGNER_PUB IN SIG           stderr "SIGNATURE: verified FPR", or exit 3
//	sign-cleartext PRIV IN                      cleartext-signed message on stdout
//	verify-cleartext SIGNER_PUB IN              the signed text on stdout, or exit 3
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/ProtonMail/gopenpgp/v2/crypto"
	"github.com/ProtonMail/gopenpgp/v2/helper"
)

func fail(status int, format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "gopenpgp-peer: "+format+"\n", args...)
	os.Exit(status)
}

func check(err error, what string) {
	if err != nil {
		fail(1, "%s: %v", what, err)
	}
}

func read(path string) []byte {
	data, err := os.ReadFile(path)
	check(err, "reading "+path)
	return data
}

func passphrase() []byte { return []byte(os.Getenv("GOPENPGP_PEER_PASSPHRASE")) }

// key reads an armored or binary key file.
func key(path string) *crypto.Key {
	data := read(path)
	k, err := crypto.NewKeyFromArmored(string(data))
	if err != nil {
		k, err = crypto.NewKey(data)
	}
	check(err, "reading the key "+path)
	return k
}

func publicRing(path string) *crypto.KeyRing {
	ring, err := crypto.NewKeyRing(key(path))
	check(err, "key ring")
	return ring
}

func privateRing(path string) *crypto.KeyRing {
	k := key(path)
	locked, err := k.IsLocked()
	check(err, "key state")
	if locked {
		k, err = k.Unlock(passphrase())
		check(err, "unlocking "+path)
	}
	ring, err := crypto.NewKeyRing(k)
	check(err, "key ring")
	return ring
}

// message reads an armored or binary OpenPGP message.
func message(path string) *crypto.PGPMessage {
	data := read(path)
	if m, err := crypto.NewPGPMessageFromArmored(string(data)); err == nil {
		return m
	}
	return crypto.NewPGPMessage(data)
}

func signature(path string) *crypto.PGPSignature {
	data := read(path)
	if s, err := crypto.NewPGPSignatureFromArmored(string(data)); err == nil {
		return s
	}
	return crypto.NewPGPSignature(data)
}

func verified(ring *crypto.KeyRing, err error) {
	var sigErr crypto.SignatureVerificationError
	if errors.As(err, &sigErr) {
		fail(3, "SIGNATURE: failed: %s", sigErr.Message)
	}
	check(err, "verifying")
	fmt.Fprintf(os.Stderr, "SIGNATURE: verified %s\n", ring.GetKeys()[0].GetFingerprint())
}

func main() {
	args := os.Args[1:]
	if len(args) == 0 {
		fail(2, "usage: gopenpgp-peer gen-key|fingerprint|encrypt-sign|decrypt-verify|sign-detached|verify-detached|sign-cleartext|verify-cleartext ...")
	}
	want := func(n int) {
		if len(args) != n+1 {
			fail(2, "%s takes %d arguments", args[0], n)
		}
	}
	now := crypto.GetUnixTime()
	switch args[0] {
	case "gen-key":
		want(4)
		k, err := crypto.GenerateKey(args[1], args[2], "x25519", 0)
		check(err, "generating a key")
		public, err := k.GetArmoredPublicKey()
		check(err, "public key")
		if pass := passphrase(); len(pass) > 0 {
			k, err = k.Lock(pass)
			check(err, "locking the key")
		}
		private, err := k.Armor()
		check(err, "armoring the key")
		check(os.WriteFile(args[3], []byte(private), 0o600), "writing "+args[3])
		check(os.WriteFile(args[4], []byte(public), 0o644), "writing "+args[4])
		fmt.Println(k.GetFingerprint())
	case "fingerprint":
		want(1)
		fmt.Println(key(args[1]).GetFingerprint())
	case "encrypt-sign":
		want(3)
		encrypted, err := publicRing(args[1]).Encrypt(crypto.NewPlainMessage(read(args[3])), privateRing(args[2]))
		check(err, "encrypting")
		printArmored(encrypted)
	case "decrypt-verify":
		want(3)
		verifier := publicRing(args[2])
		plain, err := privateRing(args[1]).Decrypt(message(args[3]), verifier, now)
		var sigErr crypto.SignatureVerificationError
		if errors.As(err, &sigErr) {
			fail(3, "SIGNATURE: failed: %s", sigErr.Message)
		}
		check(err, "decrypting")
		os.Stdout.Write(plain.GetBinary())
		verified(verifier, nil)
	case "sign-detached":
		want(2)
		sig, err := privateRing(args[1]).SignDetached(crypto.NewPlainMessage(read(args[2])))
		check(err, "signing")
		printArmored(sig)
	case "verify-detached":
		want(3)
		verifier := publicRing(args[1])
		verified(verifier, verifier.VerifyDetached(crypto.NewPlainMessage(read(args[2])), signature(args[3]), now))
	case "sign-cleartext":
		want(2)
		signed, err := helper.SignCleartextMessage(privateRing(args[1]), string(read(args[2])))
		check(err, "signing")
		fmt.Print(signed)
	case "verify-cleartext":
		want(2)
		verifier := publicRing(args[1])
		text, err := helper.VerifyCleartextMessage(verifier, string(read(args[2])), now)
		var sigErr crypto.SignatureVerificationError
		if errors.As(err, &sigErr) {
			fail(3, "SIGNATURE: failed: %s", sigErr.Message)
		}
		check(err, "verifying")
		fmt.Print(text)
		verified(verifier, nil)
	default:
		fail(2, "unknown command %q", args[0])
	}
}

// printArmored prints a message or a signature in ASCII armor.
func printArmored(value interface{ GetArmored() (string, error) }) {
	armored, err := value.GetArmored()
	check(err, "armoring")
	fmt.Println(armored)
}
