package objstore

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

const day = 24 * time.Hour

func i64(n int64) *int64 { return &n }

// lcStep is one write of a lifecycle test's history.
type lcStep struct {
	key    string
	size   int    // bytes to put; -1 deletes without version id (a marker)
	tags   string // the version's tag record, if any
	retain bool   // put under a week of COMPLIANCE retention
}

// versionsLeft lists bucket's versions as "key:n" (n counting the key's
// versions oldest first from 1, "key:dm" for a delete marker), oldest
// first per key.
func versionsLeft(t *testing.T, s *Store, bucket string, names map[string]string) []string {
	t.Helper()
	page, err := s.ListVersions(context.Background(), bucket, ListVersionsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range page.Versions {
		name := names[v.Key+"\x00"+v.VersionID]
		if v.DeleteMarker {
			name = v.Key + ":dm" // the lifecycle's markers too
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

func TestExpireObjectRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	tagged := func(k, v string) []Tag { return []Tag{{Key: k, Value: v}} }
	for i, tc := range []struct {
		name      string
		versioned bool
		lock      bool
		rules     []LifecycleRule
		history   []lcStep
		// at: offset of the run from now; want: versions left after
		// runs at each of ats in turn, with n the total expired.
		ats   []time.Duration
		wantN []int
		want  []string
	}{
		{
			name: "expiration date",
			rules: []LifecycleRule{
				{ID: "past", Prefix: "past/", Enabled: true, ExpirationDate: time.Now().Add(-time.Hour)},
				{ID: "future", Prefix: "future/", Enabled: true, ExpirationDate: time.Now().Add(300 * day)},
			},
			history: []lcStep{{key: "past/foo", size: 3}, {key: "future/bar", size: 3}},
			ats:     []time.Duration{0},
			wantN:   []int{1},
			want:    []string{"future/bar:1"},
		},
		{
			name:      "expiration date in a versioned bucket leaves a marker",
			versioned: true,
			rules:     []LifecycleRule{{ID: "past", Enabled: true, ExpirationDate: time.Now().Add(-time.Hour)}},
			history:   []lcStep{{key: "a", size: 3}},
			ats:       []time.Duration{0, 0},
			wantN:     []int{1, 0},
			want:      []string{"a:1", "a:dm"},
		},
		{
			name:  "tag filter",
			rules: []LifecycleRule{{ID: "t", Enabled: true, ExpirationDays: 1, Tags: tagged("key1", "tag1"), TagRecord: "s3.tags"}},
			history: []lcStep{
				{key: "match", size: 1, tags: "key1=tag1&key5=tag5"},
				{key: "other-value", size: 1, tags: "key1=tag2"},
				{key: "untagged", size: 1},
				{key: "garbled", size: 1, tags: "key1=%zz"},
			},
			ats:   []time.Duration{day - time.Minute, 2 * day},
			wantN: []int{0, 1},
			want:  []string{"garbled:1", "other-value:1", "untagged:1"},
		},
		{
			name: "two tags and a prefix",
			rules: []LifecycleRule{{ID: "t", Prefix: "p/", Enabled: true, ExpirationDays: 1,
				Tags: []Tag{{Key: "a", Value: "1"}, {Key: "b", Value: ""}}, TagRecord: "s3.tags"}},
			history: []lcStep{
				{key: "p/both", size: 1, tags: "a=1&b="},
				{key: "p/one", size: 1, tags: "a=1"},
				{key: "q/both", size: 1, tags: "a=1&b="},
			},
			ats:   []time.Duration{2 * day},
			wantN: []int{1},
			want:  []string{"p/one:1", "q/both:1"},
		},
		{
			name:    "size filters",
			rules:   []LifecycleRule{{ID: "s", Enabled: true, ExpirationDays: 1, SizeGreaterThan: i64(10), SizeLessThan: i64(100)}},
			history: []lcStep{{key: "small", size: 10}, {key: "mid", size: 50}, {key: "big", size: 100}},
			ats:     []time.Duration{2 * day},
			wantN:   []int{1},
			want:    []string{"big:1", "small:1"},
		},
		{
			name:      "noncurrent days keep the newer noncurrent versions",
			versioned: true,
			rules:     []LifecycleRule{{ID: "n", Enabled: true, NoncurrentDays: 1, NewerNoncurrent: 1}},
			history: []lcStep{
				{key: "k", size: 1}, {key: "k", size: 2}, {key: "k", size: 3}, {key: "k", size: 4},
				{key: "single", size: 1},
			},
			ats:   []time.Duration{day - time.Minute, 2 * day, 3 * day},
			wantN: []int{0, 2, 0},
			want:  []string{"k:3", "k:4", "single:1"},
		},
		{
			name:      "noncurrent days with a prefix and markers",
			versioned: true,
			rules:     []LifecycleRule{{ID: "n", Prefix: "test1/", Enabled: true, NoncurrentDays: 2}},
			history: []lcStep{
				{key: "test1/a", size: 1}, {key: "test1/a", size: 1}, {key: "test1/a", size: -1},
				{key: "test2/a", size: 1}, {key: "test2/a", size: 1},
			},
			ats:   []time.Duration{2*day - time.Minute, 3 * day},
			wantN: []int{0, 2},
			want:  []string{"test1/a:dm", "test2/a:1", "test2/a:2"},
		},
		{
			name:      "noncurrent locked versions stay",
			versioned: true, lock: true,
			rules: []LifecycleRule{{ID: "n", Enabled: true, NoncurrentDays: 1}},
			history: []lcStep{
				{key: "k", size: 1, retain: true}, {key: "k", size: 2}, {key: "k", size: 3},
			},
			ats:   []time.Duration{30 * day},
			wantN: []int{1},
			want:  []string{"k:1", "k:3"},
		},
		{
			name:      "expired delete marker",
			versioned: true,
			rules:     []LifecycleRule{{ID: "m", Prefix: "test1/", Enabled: true, ExpiredDeleteMarker: true}},
			history: []lcStep{
				{key: "test1/alone", size: -1},
				{key: "test1/hides", size: 1}, {key: "test1/hides", size: -1},
				{key: "test2/alone", size: -1},
			},
			ats:   []time.Duration{0},
			wantN: []int{1},
			want:  []string{"test1/hides:1", "test1/hides:dm", "test2/alone:dm"},
		},
		{
			name:      "noncurrent and expired delete marker together",
			versioned: true,
			rules:     []LifecycleRule{{ID: "both", Prefix: "test1/", Enabled: true, NoncurrentDays: 1, ExpiredDeleteMarker: true}},
			history: []lcStep{
				{key: "test1/a", size: 1}, {key: "test1/a", size: -1},
				{key: "test2/abc", size: 1}, {key: "test2/abc", size: -1},
			},
			ats:   []time.Duration{0, 2 * day},
			wantN: []int{0, 2},
			want:  []string{"test2/abc:1", "test2/abc:dm"},
		},
		{
			name:    "disabled rule",
			rules:   []LifecycleRule{{ID: "off", ExpirationDate: time.Now().Add(-day)}},
			history: []lcStep{{key: "a", size: 1}},
			ats:     []time.Duration{10 * day},
			wantN:   []int{0},
			want:    []string{"a:1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bucket := fmt.Sprintf("rules%d", i)
			if tc.lock {
				if err := s.CreateBucket(ctx, bucket, BucketOptions{ObjectLock: true}); err != nil {
					t.Fatal(err)
				}
			} else {
				mustBucket(t, s, bucket)
			}
			if tc.versioned && !tc.lock {
				if err := s.SetVersioning(ctx, bucket, VersioningEnabled); err != nil {
					t.Fatal(err)
				}
			}
			names := map[string]string{}
			count := map[string]int{}
			for _, st := range tc.history {
				if st.size < 0 {
					res, err := s.Delete(ctx, bucket, st.key, DeleteOptions{})
					if err != nil {
						t.Fatal(err)
					}
					names[st.key+"\x00"+res.VersionID] = st.key + ":dm"
					continue
				}
				var a Attrs
				if st.tags != "" {
					a.Sys = map[string]string{"s3.tags": st.tags}
				}
				if st.retain {
					a.Retention = Retention{Mode: RetentionCompliance, Until: time.Now().Add(7 * day)}
				}
				info, err := s.Put(ctx, bucket, st.key, bytes.NewReader(make([]byte, st.size)), int64(st.size), PutOptions{Attrs: a})
				if err != nil {
					t.Fatal(err)
				}
				count[st.key]++
				names[st.key+"\x00"+info.VersionID] = fmt.Sprintf("%s:%d", st.key, count[st.key])
			}
			if err := s.SetLifecycle(ctx, bucket, tc.rules); err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			for j, at := range tc.ats {
				n, err := s.ExpireObjects(ctx, now.Add(at))
				if err != nil || n != tc.wantN[j] {
					t.Fatalf("run %d at +%v: expired %d (%v), want %d", j, at, n, err, tc.wantN[j])
				}
			}
			if got := versionsLeft(t, s, bucket, names); !slices.Equal(got, tc.want) {
				t.Fatalf("versions left %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLifecycleDue(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t, 4, 2)
	short, _ := newTestStore(t, 4, 2, func(o *Options) { o.LifecycleDay = time.Second })
	at := func(v string) time.Time {
		tm, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	for _, tc := range []struct {
		s    *Store
		from string
		days int
		want string
	}{
		// S3's own example: 10:30 on the 15th plus 3 days expires at
		// midnight UTC starting the 19th.
		{s, "2014-01-15T10:30:00Z", 3, "2014-01-19T00:00:00Z"},
		{s, "2014-01-15T00:00:00Z", 1, "2014-01-16T00:00:00Z"},
		{s, "2014-01-15T23:59:59.5+02:00", 1, "2014-01-17T00:00:00Z"},
		{short, "2014-01-15T10:30:00.25Z", 2, "2014-01-15T10:30:03Z"},
	} {
		if got := tc.s.lifecycleDue(at(tc.from), tc.days); !got.Equal(at(tc.want)) {
			t.Errorf("%s + %d days: %v, want %s", tc.from, tc.days, got.UTC(), tc.want)
		}
	}
}

func TestExpirationOf(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t, 4, 2)
	mod := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	date := time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC)
	tags := Attrs{Sys: map[string]string{"s3.tags": "key1=tag1"}}
	obj := ObjectInfo{Key: "logs/a", Size: 10, ModTime: mod, Attrs: tags}
	for _, tc := range []struct {
		name   string
		rules  []LifecycleRule
		obj    ObjectInfo
		want   time.Time
		wantID string
	}{
		{"days", []LifecycleRule{{ID: "r", Enabled: true, ExpirationDays: 2}}, obj, time.Date(2026, 3, 7, 0, 0, 0, 0, time.UTC), "r"},
		{"date", []LifecycleRule{{ID: "d", Enabled: true, ExpirationDate: date}}, obj, date, "d"},
		{"earliest of two", []LifecycleRule{
			{ID: "late", Enabled: true, ExpirationDays: 30},
			{ID: "soon", Prefix: "logs/", Enabled: true, ExpirationDays: 1},
		}, obj, time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC), "soon"},
		{"tag matches", []LifecycleRule{{ID: "t", Enabled: true, ExpirationDays: 1, Tags: []Tag{{Key: "key1", Value: "tag1"}}, TagRecord: "s3.tags"}},
			obj, time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC), "t"},
		{"tag differs", []LifecycleRule{{ID: "t", Enabled: true, ExpirationDays: 1, Tags: []Tag{{Key: "key2", Value: "tag1"}}, TagRecord: "s3.tags"}}, obj, time.Time{}, ""},
		{"other prefix", []LifecycleRule{{ID: "p", Prefix: "tmp/", Enabled: true, ExpirationDays: 1}}, obj, time.Time{}, ""},
		{"disabled", []LifecycleRule{{ID: "off", ExpirationDays: 1}}, obj, time.Time{}, ""},
		{"noncurrent only", []LifecycleRule{{ID: "n", Enabled: true, NoncurrentDays: 1}}, obj, time.Time{}, ""},
		{"delete marker", []LifecycleRule{{ID: "r", Enabled: true, ExpirationDays: 1}}, ObjectInfo{Key: "a", DeleteMarker: true}, time.Time{}, ""},
	} {
		at, id, ok := s.Expiration(tc.rules, tc.obj)
		if ok != !tc.want.IsZero() || !at.Equal(tc.want) || id != tc.wantID {
			t.Errorf("%s: %v %q %v, want %v %q", tc.name, at, id, ok, tc.want, tc.wantID)
		}
	}
}
