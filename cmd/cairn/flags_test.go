package main

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

func TestParseArgs(t *testing.T) {
	store := func(data string) storeFlags { return storeFlags{Data: data, Parity: -1} }
	mem := memoryFlags{WriteBuffers: "64MiB", Limit: "auto"}
	tests := []struct {
		name      string
		args      []string
		wantName  string
		wantOpts  any
		wantLevel string // "" means info
		wantErr   string // substring of the error; "" means success
	}{
		// serve
		{name: "serve minimal", args: []string{"serve", "--data", "/d"},
			wantName: "serve", wantOpts: serveOptions{Store: store("/d"), Address: "127.0.0.1:9000", MountOpt: mountFlags{AttrTimeout: time.Second}, Log: logFlags{Level: "info"}, ReadCache: readCacheFlag{Size: "auto"}, Memory: mem, Region: "us-east-1", CredentialTTL: time.Hour, MaintenanceInterval: time.Hour}},
		{name: "serve everything", args: []string{"serve", "--data=/d", "--drives", "6", "--parity", "2",
			"--address", "0.0.0.0:9100", "--mount", "/mnt/cairn", "--attr-timeout", "1h", "--log-level", "debug", "--read-cache", "512MiB",
			"--write-buffers", "32MiB", "--memory-limit", "1GiB", "--region", "eu-west-3"},
			wantName: "serve", wantLevel: "debug",
			wantOpts: serveOptions{Store: storeFlags{Data: "/d", Drives: 6, Parity: 2}, Address: "0.0.0.0:9100",
				Mount: "/mnt/cairn", MountOpt: mountFlags{AttrTimeout: time.Hour}, Log: logFlags{Level: "debug"}, ReadCache: readCacheFlag{Size: "512MiB"}, Memory: memoryFlags{WriteBuffers: "32MiB", Limit: "1GiB"}, Region: "eu-west-3", CredentialTTL: time.Hour, MaintenanceInterval: time.Hour}},
		{name: "serve repeated drive", args: []string{"serve", "-data", "/d", "--drive", "/a", "--drive", "/b", "--parity", "0"},
			wantName: "serve", wantOpts: serveOptions{Store: storeFlags{Data: "/d", Drive: []string{"/a", "/b"}, Parity: 0},
				Address: "127.0.0.1:9000", MountOpt: mountFlags{AttrTimeout: time.Second}, Log: logFlags{Level: "info"}, ReadCache: readCacheFlag{Size: "auto"}, Memory: mem, Region: "us-east-1", CredentialTTL: time.Hour, MaintenanceInterval: time.Hour}},
		{name: "serve without data", args: []string{"serve"}, wantErr: "--data is required"},
		{name: "serve unknown flag", args: []string{"serve", "--data", "/d", "--bogus"}, wantErr: "unknown flag --bogus"},
		{name: "serve drives and drive", args: []string{"serve", "--data", "/d", "--drives", "2", "--drive", "/a"}, wantErr: "either --drives or --drive"},
		{name: "serve negative drives", args: []string{"serve", "--data", "/d", "--drives", "-1"}, wantErr: "--drives must not be negative"},
		{name: "serve parity too low", args: []string{"serve", "--data", "/d", "--parity", "-2"}, wantErr: "--parity must be -1"},
		{name: "serve parity not a number", args: []string{"serve", "--data", "/d", "--parity", "two"}, wantErr: "invalid argument \"two\" for \"--parity\" flag"},
		{name: "serve bad read cache", args: []string{"serve", "--data", "/d", "--read-cache", "lots"}, wantErr: "--read-cache \"lots\""},
		{name: "serve bad write buffers", args: []string{"serve", "--data", "/d", "--write-buffers", "-5"}, wantErr: "--write-buffers \"-5\""},
		{name: "serve bad region", args: []string{"serve", "--data", "/d", "--region", "EU West"}, wantErr: "--region \"EU West\""},
		{name: "serve empty region", args: []string{"serve", "--data", "/d", "--region", ""}, wantErr: "--region \"\""},
		{name: "serve region ends with a dash", args: []string{"serve", "--data", "/d", "--region", "eu-"}, wantErr: "--region \"eu-\""},
		{name: "serve bad memory limit", args: []string{"serve", "--data", "/d", "--memory-limit", "big"}, wantErr: "--memory-limit \"big\""},
		{name: "mount has no read cache", args: []string{"mount", "--data", "/d", "--read-cache", "1GiB", "/m"}, wantErr: "unknown flag --read-cache"},
		{name: "serve empty drive", args: []string{"serve", "--data", "/d", "--drive", ""}, wantErr: "--drive must not be empty"},
		{name: "serve bad address", args: []string{"serve", "--data", "/d", "--address", "localhost"}, wantErr: "--address \"localhost\""},
		{name: "serve bad log level", args: []string{"serve", "--data", "/d", "--log-level", "loud"}, wantErr: "unknown log level \"loud\""},
		{name: "serve positional", args: []string{"serve", "--data", "/d", "extra"}, wantErr: "unexpected argument \"extra\""},
		{name: "serve help", args: []string{"serve", "-h"}, wantName: "help"},

		// mount
		{name: "mount", args: []string{"mount", "--data", "/d", "/mnt"},
			wantName: "mount", wantOpts: mountOptions{Store: store("/d"), Mount: mountFlags{AttrTimeout: time.Second}, Mountpoint: "/mnt", Log: logFlags{Level: "info"}}},
		{name: "mount point first", args: []string{"mount", "/mnt", "--data", "/d", "--attr-timeout", "5s"},
			wantName: "mount", wantOpts: mountOptions{Store: store("/d"), Mount: mountFlags{AttrTimeout: 5 * time.Second}, Mountpoint: "/mnt", Log: logFlags{Level: "info"}}},
		{name: "mount without point", args: []string{"mount", "--data", "/d"}, wantErr: "exactly one mount point, got 0"},
		{name: "mount two points", args: []string{"mount", "--data", "/d", "/a", "/b"}, wantErr: "exactly one mount point, got 2"},
		{name: "mount bad timeout", args: []string{"mount", "--data", "/d", "--attr-timeout", "0s", "/a"}, wantErr: "--attr-timeout must be positive"},

		// admin
		{name: "fsck", args: []string{"admin", "fsck", "--data", "/d"},
			wantName: "admin fsck", wantOpts: fsckOptions{Store: store("/d"), Log: logFlags{Level: "info"}}},
		{name: "fsck json with drives", args: []string{"admin", "fsck", "--data", "/d", "--drives", "4", "--parity", "2", "--json"},
			wantName: "admin fsck", wantOpts: fsckOptions{Store: storeFlags{Data: "/d", Drives: 4, Parity: 2}, JSON: true, Log: logFlags{Level: "info"}}},
		{name: "fsck without data", args: []string{"admin", "fsck", "--json"}, wantErr: "--data is required"},
		{name: "fsck address is not a flag", args: []string{"admin", "fsck", "--data", "/d", "--address", "x:1"}, wantErr: "unknown flag --address"},
		{name: "heal", args: []string{"admin", "heal", "--data", "/d", "--drive", "/a", "--log-level", "warn"},
			wantName: "admin heal", wantLevel: "warn",
			wantOpts: healOptions{Store: storeFlags{Data: "/d", Drive: []string{"/a"}, Parity: -1}, Log: logFlags{Level: "warn"}}},
		{name: "heal json", args: []string{"admin", "heal", "--json", "--data", "/d"},
			wantName: "admin heal", wantOpts: healOptions{Store: store("/d"), JSON: true, Log: logFlags{Level: "info"}}},
		{name: "admin alone", args: []string{"admin"}, wantErr: "no admin command given"},
		{name: "admin unknown", args: []string{"admin", "scrub"}, wantErr: "unknown admin command \"scrub\""},
		{name: "admin help", args: []string{"admin", "help"}, wantName: "help"},

		// the rest
		{name: "version", args: []string{"version"}, wantName: "version", wantOpts: versionOptions{}},
		{name: "version with argument", args: []string{"version", "now"}, wantErr: "unexpected argument \"now\""},
		{name: "no command", args: nil, wantErr: "no command given"},
		{name: "unknown command", args: []string{"serv"}, wantErr: "unknown command \"serv\""},
		{name: "help", args: []string{"--help"}, wantName: "help"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv, err := parseArgs(tt.args)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("parseArgs(%q) = %+v, want an error containing %q", tt.args, inv, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %q, want it to contain %q", err, tt.wantErr)
				}
				if !errors.Is(err, errUsage) {
					t.Fatalf("error %q does not wrap errUsage", err)
				}
				if code, _ := exitStatus("", err); code != exitError {
					t.Fatalf("exit code %d for a bad command line, want %d", code, exitError)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseArgs(%q): %v", tt.args, err)
			}
			if inv.name != tt.wantName {
				t.Fatalf("command %q, want %q", inv.name, tt.wantName)
			}
			if tt.wantName == "help" {
				if h, ok := inv.opts.(helpOptions); !ok || !strings.Contains(h.text, "Usage") {
					t.Fatalf("help options %#v, want usage text", inv.opts)
				}
				return
			}
			if !reflect.DeepEqual(inv.opts, tt.wantOpts) {
				t.Fatalf("options\n got %#v\nwant %#v", inv.opts, tt.wantOpts)
			}
			want := zerolog.InfoLevel
			if tt.wantLevel != "" {
				want, _ = zerolog.ParseLevel(tt.wantLevel)
			}
			if inv.logLevel != want {
				t.Fatalf("log level %v, want %v", inv.logLevel, want)
			}
		})
	}
}

func TestStoreFlagsOptions(t *testing.T) {
	s := storeFlags{Data: "/d", Drive: []string{"/a", "/b"}, Parity: 1}
	o := s.options(zerolog.Nop())
	if o.Dir != "/d" || !reflect.DeepEqual(o.Drives, []string{"/a", "/b"}) || o.DriveCount != 0 || o.Parity != 1 {
		t.Fatalf("options %+v do not carry the flags %+v", o, s)
	}
	if err := o.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
}

func TestReadCacheFlag(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    int64 // -1: auto, anything from 1 byte to maxAutoReadCache
		wantErr bool
	}{
		{"0", 0, false}, {"512MiB", 512 << 20, false}, {"2GiB", 2 << 30, false}, {"4096", 4096, false},
		{"auto", -1, false}, {"", 0, true}, {"-1", 0, true}, {"1.5GiB", 0, true}, {"lots", 0, true},
	} {
		got, err := readCacheFlag{Size: tc.in}.bytes("serve")
		switch {
		case tc.wantErr:
			if err == nil {
				t.Errorf("%q: accepted as %d", tc.in, got)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case tc.want == -1 && (got <= 0 || got > maxAutoReadCache):
			t.Errorf("auto = %d, want (0, %d]", got, maxAutoReadCache)
		case tc.want != -1 && got != tc.want:
			t.Errorf("%q = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestMemoryFlags(t *testing.T) {
	for _, tc := range []struct {
		buffers, limit string
		wantBuffers    int64 // Options.WriteBuffers
		wantLimit      int64
		wantErr        bool
	}{
		{"64MiB", "auto", 64 << 20, 256<<20 + 128<<20, false},
		{"16MiB", "auto", 16 << 20, 256<<20 + 32<<20, false},
		{"0", "auto", -1, 0, false}, // unbounded buffers: no automatic limit
		{"64MiB", "0", 64 << 20, 0, false},
		{"64MiB", "2GiB", 64 << 20, 2 << 30, false},
		{"lots", "auto", 0, 0, true},
		{"64MiB", "-1", 0, 0, true},
		{"", "auto", 0, 0, true},
	} {
		m := memoryFlags{WriteBuffers: tc.buffers, Limit: tc.limit}
		if err := m.check("serve"); (err != nil) != tc.wantErr {
			t.Errorf("%q %q: check: %v", tc.buffers, tc.limit, err)
			continue
		}
		if tc.wantErr {
			continue
		}
		wb, _ := m.writeBuffers("serve")
		lim, _ := m.limit("serve")
		if wb != tc.wantBuffers || lim != tc.wantLimit {
			t.Errorf("%q %q: write buffers %d, limit %d; want %d, %d", tc.buffers, tc.limit, wb, lim, tc.wantBuffers, tc.wantLimit)
		}
	}
}

func TestCgroupLimit(t *testing.T) {
	files := map[string]string{
		"/sys/fs/cgroup/box/memory.max":                       "2147483648\n",
		"/sys/fs/cgroup/open/memory.max":                      "max\n",
		"/sys/fs/cgroup/memory/job/memory.limit_in_bytes":     "1073741824\n",
		"/sys/fs/cgroup/memory/nolimit/memory.limit_in_bytes": "9223372036854771712\n",
	}
	read := func(p string) ([]byte, error) {
		if v, ok := files[p]; ok {
			return []byte(v), nil
		}
		return nil, errors.New("no such file")
	}
	for _, tc := range []struct {
		cgroup string
		want   int64
		ok     bool
	}{
		{"0::/box\n", 2 << 30, true},
		{"0::/open\n", 0, false},
		{"4:memory:/job\n0::/\n", 1 << 30, true},
		{"4:cpu,memory:/job\n", 1 << 30, true},
		{"4:memory:/nolimit\n", 0, false},
		{"0::/missing\n", 0, false},
		{"garbage", 0, false},
	} {
		got, ok := cgroupLimit(tc.cgroup, read)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%q: %d %v, want %d %v", tc.cgroup, got, ok, tc.want, tc.ok)
		}
	}
}
