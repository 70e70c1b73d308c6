/// The fixed OpenPGP key (Ed25519 + Curve25519, made once with gpg, its passphrase in the targets)
/// that the `openpgp`, `pgpmime` and `srp` targets decrypt and verify with, and that
/// Fuzz/make-seeds.py makes gpg seed messages to. One copy, so the targets and the seeds agree.
public let fuzzKeyArmored = """
-----BEGIN PGP PRIVATE KEY BLOCK-----

lIYEawbHhBYJKwYBBAHaRw8BAQdAWf8QhpGGK7KOgr3TFTLIEbz58LjM7Rt9XpCZ
qHn5fnb+BwMCfYJP4Xz5sOr/uIPIoPm2AxQ8TpBykXDstCDZ5TFHMHb0WWeUvgXd
TKh1EOfa2R6Exbw9C+sq4gF5JXjAXr7dURWXdb5R0zeybrWPXg4BSLQjUmFtcGFy
dCBGdXp6IDxmdXp6QHJhbXBhcnQuaW52YWxpZD6IkAQTFggAOBYhBFCl3PJ0MHy/
lDk/WeegtY6UnBj/BQJrBseEAhsDBQsJCAcCBhUKCQgLAgQWAgMBAh4BAheAAAoJ
EOegtY6UnBj/xZcBAPc1YFDTs6CX+TkB/Vmvh1lHVc/hP+y8yTTyXHUtZ+zyAQCP
vDl5720Z2pCuHs2lrf0tEIhVIxj5EEkQEkVV45FaCJyLBGsGx4cSCisGAQQBl1UB
BQEBB0CAm/aZIT0aIFLcstvZL3pxuV1YPJqpftdVEh+lU7ZlEQMBCAf+BwMC60Qh
caEnEfX/9t/H2EWlybiPEZz66OyjUUoAn8cVE/oXEM29OnLVg5z1QulHGJoP2QlQ
FPERdYmcU1K05e8JQ8IZd0FV8A9b8IceXvwMC4h4BBgWCAAgFiEEUKXc8nQwfL+U
OT9Z56C1jpScGP8FAmsGx4cCGwwACgkQ56C1jpScGP/34wEA7r2DOFGU2Hr95NxB
KVRh1Hr+I8yaYf5utahcSk52AugA+wUC8gPEHLczFz71GJvQenT2SmcDoaNl6FuN
jNC5uZ0A
=XV8Q
-----END PGP PRIVATE KEY BLOCK-----
"""
