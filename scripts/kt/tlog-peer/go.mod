module rampart.invalid/tlog-peer

go 1.19
