// Built in GOPATH mode (GO111MODULE=off, Debian's /usr/share/gocode): this file only makes the go
// command resolve the /v2 import path to Debian's gopenpgp folder ("minimal module compatibility").
module rampart.invalid/gopenpgp-peer

go 1.15

require github.com/ProtonMail/gopenpgp/v2 v2.5.2
