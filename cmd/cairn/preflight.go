package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/cairnstore/cairn/catalog/strong"
	"github.com/cairnstore/cairn/frontends/s3/sse"
	"github.com/cairnstore/cairn/objstore/meta"
)

// The checks here run before a command opens its store, so that a bad
// setting is reported before anything is created or formatted: a new data
// directory stays as it was (absent, or empty) when serve, mount, fsck or
// heal refuse to start.

// newStoreDrives is the drive count a new data directory gets without
// --drives or --drive (objstore's default).
const newStoreDrives = 4

// hasStore reports whether dir holds a store (its index exists).
func hasStore(dir string) (bool, error) {
	_, err := os.Stat(meta.BoltPath(dir))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	default:
		return false, fmt.Errorf("data directory %s: %w", dir, err)
	}
}

// checkDataDir checks --data before a store is opened or created there: it
// must be a directory if it exists, and a new store's parity must fit its
// drives. A store already there checks the flags against what it recorded,
// changing nothing when they disagree.
func (s storeFlags) checkDataDir(cmd string) error {
	if fi, err := os.Stat(s.Data); err == nil && !fi.IsDir() {
		return usageErrorf(cmd, "--data %s is not a directory", s.Data)
	}
	exists, err := hasStore(s.Data)
	if err != nil || exists {
		return err
	}
	drives := s.Drives
	if len(s.Drive) > 0 {
		drives = len(s.Drive)
	}
	if drives == 0 {
		drives = newStoreDrives
	}
	if drives > 256 {
		return usageErrorf(cmd, "at most 256 drives, got %d", drives)
	}
	if s.Parity >= drives {
		return usageErrorf(cmd, "--parity %d needs at least %d drives, the new store at %s would have %d (set --drives, or lower --parity)",
			s.Parity, s.Parity+1, s.Data, drives)
	}
	return nil
}

// needStore refuses a data directory without a store: the offline tools
// check and repair one, they do not create one.
func needStore(cmd, dir string) error {
	exists, err := hasStore(dir)
	if err != nil {
		return err
	}
	if !exists {
		return usageErrorf(cmd, "no store in %s (no %s); give the --data of a server", dir, meta.BoltPath(dir))
	}
	return nil
}

// checkMountpoint checks that dir exists and is a directory. A stale
// FUSE mount there (its server died: ENOTCONN) passes: the mount clears
// it before mounting (fs.Mount), as it did before this check existed.
func checkMountpoint(cmd, flag, dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, syscall.ENOTCONN):
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return usageErrorf(cmd, "%s %s does not exist; create the directory first", flag, dir)
	case err != nil:
		return usageErrorf(cmd, "%s %s: %v", flag, dir, err)
	case !fi.IsDir():
		return usageErrorf(cmd, "%s %s is not a directory", flag, dir)
	}
	return nil
}

// checkRootEnv refuses CAIRN_ROOT_USER without CAIRN_ROOT_PASSWORD and the
// reverse (which would quietly fall back to the default root user).
func checkRootEnv(cmd string) error {
	user, password := os.Getenv("CAIRN_ROOT_USER"), os.Getenv("CAIRN_ROOT_PASSWORD")
	if (user == "") != (password == "") {
		return usageErrorf(cmd, "set both $CAIRN_ROOT_USER and $CAIRN_ROOT_PASSWORD, or neither (for the default root user)")
	}
	return nil
}

// checkServeEnv checks every CAIRN_* variable serve reads.
func checkServeEnv(cmd string) error {
	if err := checkRootEnv(cmd); err != nil {
		return err
	}
	if _, err := catalogBacking(); err != nil {
		return usageErrorf(cmd, "%v", err)
	}
	if _, err := parseFailpoints(); err != nil {
		return usageErrorf(cmd, "%v", err)
	}
	for _, env := range strongGateEnvs() {
		if _, valid := strong.ParseGate(os.Getenv(env)); !valid {
			return usageErrorf(cmd, "$%s=%q: want true or false", env, os.Getenv(env))
		}
	}
	if e := os.Getenv("CAIRN_S3_ENDPOINT"); e != "" {
		if _, err := normaliseEndpoint(e); err != nil {
			return usageErrorf(cmd, "$CAIRN_S3_ENDPOINT=%q: %v", e, err)
		}
	}
	for _, d := range strings.Split(os.Getenv("CAIRN_DOMAIN"), ",") {
		if d = strings.TrimSpace(d); strings.ContainsAny(d, "/: ") {
			return usageErrorf(cmd, "$CAIRN_DOMAIN: %q is not a host name (give names separated by commas, e.g. s3.example.com)", d)
		}
	}
	return nil
}

// check reads the keys given by file or environment, so that a bad one
// stops serve before the store is opened. (The key serve generates when
// none is given is written only after.)
func (f sseFlags) check(cmd string) error {
	if f.MasterKeyFile != "" {
		raw, err := os.ReadFile(f.MasterKeyFile)
		if err != nil {
			return usageErrorf(cmd, "--sse-master-key-file: %v", err)
		}
		if _, err := sse.ParseKey(string(raw)); err != nil {
			return usageErrorf(cmd, "--sse-master-key-file %s: %v", f.MasterKeyFile, err)
		}
	} else if v := os.Getenv(masterKeyEnv); v != "" {
		if _, err := sse.ParseKey(v); err != nil {
			return usageErrorf(cmd, "$%s: %v", masterKeyEnv, err)
		}
	}
	if f.KeyRingFile != "" {
		raw, err := os.ReadFile(f.KeyRingFile)
		if err != nil {
			return usageErrorf(cmd, "--sse-kms-keyring: %v", err)
		}
		if _, err := sse.ParseKeyRing(string(raw)); err != nil {
			return usageErrorf(cmd, "--sse-kms-keyring %s: %v", f.KeyRingFile, err)
		}
	}
	return nil
}

// listenFirst binds address before the store is opened: a port in use
// fails the start with nothing created. The caller serves on the listener
// or closes it.
func listenFirst(ctx context.Context, address string) (net.Listener, error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", address)
	if err != nil {
		return nil, usageErrorf("serve", "--address %s: %v (is another server listening there? pick another --address)", address, err)
	}
	return ln, nil
}
