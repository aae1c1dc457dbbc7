package main

import (
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/spf13/pflag"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rs/zerolog"

	"github.com/cairnstore/cairn/frontends/s3"
	"github.com/cairnstore/cairn/frontends/s3/sse"
)

// sseFlags are serve's server-side encryption flags.
type sseFlags struct {
	MasterKeyFile string
	KeyRingFile   string
	SSECOverHTTP  bool
}

// masterKeyEnv holds the SSE-S3 master key (hex or base64 of 32 bytes)
// when --sse-master-key-file is not given.
const masterKeyEnv = "CAIRN_SSE_MASTER_KEY"

// generatedMasterKey is where serve keeps the master key it generates
// when none is given: in the data directory, beside drives/ and meta/.
const generatedMasterKey = "sse-master.key"

func (f *sseFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.MasterKeyFile, "sse-master-key-file", "", "`file` holding the SSE-S3 master key (32 bytes, hex or base64; default $"+masterKeyEnv+", else on a cluster one derived from the cluster secret, else DATA/"+generatedMasterKey+", generated on first start)")
	fs.StringVar(&f.KeyRingFile, "sse-kms-keyring", "", "SSE-KMS key ring `file`: lines of \"name key\" (32-byte keys, hex or base64); the first is the default key")
	fs.BoolVar(&f.SSECOverHTTP, "sse-c-over-http", false, "accept SSE-C keys over plain HTTP from any address (default: TLS or loopback only)")
}

// keys loads the master key and the key ring as the flags say.
func (f sseFlags) keys(dataDir string, clusterSecret []byte, log zerolog.Logger) (*sse.Keys, error) {
	master, err := f.masterKey(dataDir, clusterSecret, log)
	if err != nil {
		return nil, err
	}
	var ring []sse.NamedKey
	if f.KeyRingFile != "" {
		raw, err := os.ReadFile(f.KeyRingFile)
		if err != nil {
			return nil, fmt.Errorf("--sse-kms-keyring: %w", err)
		}
		if ring, err = sse.ParseKeyRing(string(raw)); err != nil {
			return nil, fmt.Errorf("--sse-kms-keyring %s: %w", f.KeyRingFile, err)
		}
		log.Info().Int("keys", len(ring)).Str("file", f.KeyRingFile).Msg("SSE-KMS key ring loaded")
	}
	k, err := sse.NewKeys(master, ring)
	if err != nil {
		return nil, err
	}
	log.Info().Str("master_key_id", k.MasterID()).Msg("SSE-S3 master key loaded")
	return k, nil
}

// masterKey is the SSE-S3 master key: --sse-master-key-file, else
// $CAIRN_SSE_MASTER_KEY, else on a cluster one derived from the cluster
// secret (every node must decrypt what any of them encrypted), else the
// key generated in the data directory.
func (f sseFlags) masterKey(dataDir string, clusterSecret []byte, log zerolog.Logger) ([]byte, error) {
	if f.MasterKeyFile != "" {
		raw, err := os.ReadFile(f.MasterKeyFile)
		if err != nil {
			return nil, fmt.Errorf("--sse-master-key-file: %w", err)
		}
		k, err := sse.ParseKey(string(raw))
		if err != nil {
			return nil, fmt.Errorf("--sse-master-key-file %s: %w", f.MasterKeyFile, err)
		}
		return k, nil
	}
	if v := os.Getenv(masterKeyEnv); v != "" {
		k, err := sse.ParseKey(v)
		if err != nil {
			return nil, fmt.Errorf("$%s: %w", masterKeyEnv, err)
		}
		return k, nil
	}
	if clusterSecret != nil {
		return hkdf.Key(sha256.New, clusterSecret, nil, "cairn sse-s3 master key v1", 32)
	}
	path := filepath.Join(dataDir, generatedMasterKey)
	raw, err := os.ReadFile(path)
	if err == nil {
		k, err := sse.ParseKey(string(raw))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return k, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	k := make([]byte, sse.KeySize)
	if _, err := rand.Read(k); err != nil {
		return nil, err
	}
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("generate the SSE-S3 master key: %w", err)
	}
	_, err = fh.WriteString(hex.EncodeToString(k) + "\n")
	if err == nil {
		err = fh.Sync()
	}
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("generate the SSE-S3 master key: %w", err)
	}
	log.Warn().Str("file", path).Msg("no SSE-S3 master key given (--sse-master-key-file or $" + masterKeyEnv + "): generated one; back it up apart from the data, without it SSE-S3 objects cannot be read")
	return k, nil
}

// s3Option gives the S3 face these keys.
func (f sseFlags) s3Option(k *sse.Keys) func(*s3.Options) {
	return func(o *s3.Options) { o.SSE, o.SSECOverHTTP = k, f.SSECOverHTTP }
}
