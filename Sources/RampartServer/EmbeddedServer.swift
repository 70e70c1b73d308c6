import Hummingbird
import HummingbirdTLS
import GRDB
import X509
import RampartAPI
