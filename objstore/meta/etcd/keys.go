package etcd

import (
	"github.com/cairnstore/cairn/objstore/meta"
)

// The key layout under the store's prefix P (doc.go):
//
//	P rev              the store's commit marker: every write transaction
//	                   compares its mod revision and rewrites it
//	P seq              NextSeq's counter, in decimal
//	P t/<table>/<key>  a table's key
const (
	revSuffix   = "rev"
	seqSuffix   = "seq"
	tableInfix  = "t/"
	tableSep    = '/'
	tableSepEnd = tableSep + 1 // the byte after tableSep: the end of a table's range
)

// keys computes the full keys of one store.
type keys struct {
	prefix string
	rev    string
	seq    string
	// tables holds each table's key prefix, P t/<table>/.
	tables map[meta.Table]string
}

func newKeys(prefix string) keys {
	k := keys{prefix: prefix, rev: prefix + revSuffix, seq: prefix + seqSuffix, tables: map[meta.Table]string{}}
	for _, t := range meta.AllTables {
		k.tables[t] = prefix + tableInfix + string(t) + string(rune(tableSep))
	}
	return k
}

// full returns the etcd key of key in the table whose prefix is tp.
func full(tp string, key []byte) string { return tp + string(key) }

// end returns the end (exclusive) of the range of the table whose prefix
// is tp.
func end(tp string) string { return tp[:len(tp)-1] + string(rune(tableSepEnd)) }

// Overheads, in bytes, that the index adds to a transaction beyond the
// key and value bytes of its writes (see Index.Limits). opFraming bounds
// the protobuf framing of one put or delete in a TxnRequest (three nested
// messages, each a tag and a length of at most 3 bytes, and the value's);
// txnFraming bounds the rest: the compare, the marker and counter puts
// (without their keys), the request and raft headers.
const (
	opFraming  = 16
	txnFraming = 512
	// txnIDLen is the length of the marker's value, a transaction's id.
	txnIDLen = 32
	// seqLen bounds the length of the counter's value.
	seqLen = 20
	// minTxnOps is the least --max-txn-ops the index works with: one
	// write, the marker and the counter.
	minTxnOps = 3
	// minTxnBytes is the least room for writes the index works with.
	minTxnBytes = 1024
)

// maxTableLen is the length of the longest table name.
func maxTableLen() int {
	n := 0
	for _, t := range meta.AllTables {
		n = max(n, len(t))
	}
	return n
}

// fixedBytes bounds what a write transaction adds besides its writes.
func (c Config) fixedBytes() int {
	p := len(c.Prefix)
	return txnFraming + len(c.Username) +
		p + len(revSuffix) + // the compare
		p + len(revSuffix) + txnIDLen + opFraming + // the marker
		p + len(seqSuffix) + seqLen + opFraming // the counter
}

// perWrite bounds what each write adds besides its key and value.
func (c Config) perWrite() int {
	return len(c.Prefix) + len(tableInfix) + maxTableLen() + 1 + opFraming
}

// derivedLimits is the most a transaction may write so that, whatever
// its writes, the request fits the cluster's bounds.
func (c Config) derivedLimits() meta.Limits {
	writes := c.MaxTxnOps - 2 // the marker and the counter
	return meta.Limits{MaxWrites: writes, MaxBytes: c.MaxRequestBytes - c.fixedBytes() - writes*c.perWrite()}
}
