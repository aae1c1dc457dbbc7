package fs

import "testing"

func TestSelfEvents(t *testing.T) {
	type op struct {
		kind        string // "expect", "consume" or "cancel"
		bucket, key string
		want        bool // consume's answer
	}
	for _, tc := range []struct {
		name    string
		ops     []op
		pending int // keys still counted at the end
	}{
		{"consume without expect", []op{
			{"consume", "b", "k", false},
		}, 0},
		{"expect then consume once", []op{
			{"expect", "b", "k", false},
			{"consume", "b", "k", true},
			{"consume", "b", "k", false},
		}, 0},
		{"expect twice consume twice", []op{
			{"expect", "b", "k", false},
			{"expect", "b", "k", false},
			{"consume", "b", "k", true},
			{"consume", "b", "k", true},
			{"consume", "b", "k", false},
		}, 0},
		{"expect twice consume once leaves one", []op{
			{"expect", "b", "k", false},
			{"expect", "b", "k", false},
			{"consume", "b", "k", true},
		}, 1},
		{"cancel undoes expect", []op{
			{"expect", "b", "k", false},
			{"cancel", "b", "k", false},
			{"consume", "b", "k", false},
		}, 0},
		{"cancel undoes one of two", []op{
			{"expect", "b", "k", false},
			{"expect", "b", "k", false},
			{"cancel", "b", "k", false},
			{"consume", "b", "k", true},
			{"consume", "b", "k", false},
		}, 0},
		{"cancel without expect does not go negative", []op{
			{"cancel", "b", "k", false},
			{"expect", "b", "k", false},
			{"consume", "b", "k", true},
			{"consume", "b", "k", false},
		}, 0},
		{"keys are separate", []op{
			{"expect", "b", "k", false},
			{"consume", "b", "other", false},
			{"consume", "other", "k", false},
			{"consume", "b", "k", true},
		}, 0},
		{"bucket and key do not run together", []op{
			// "a"+"b/c" and "a/b"+"c" are different objects.
			{"expect", "a", "b/c", false},
			{"consume", "a/b", "c", false},
			{"consume", "a", "b/c", true},
		}, 0},
		{"bucket itself (empty key)", []op{
			{"expect", "b", "", false},
			{"consume", "b", "x", false},
			{"consume", "b", "", true},
		}, 0},
		{"unconsumed keys stay counted", []op{
			{"expect", "b", "k1", false},
			{"expect", "b", "k2", false},
			{"consume", "b", "k1", true},
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s selfEvents
			s.init()
			for i, o := range tc.ops {
				switch o.kind {
				case "expect":
					s.expect(o.bucket, o.key)
				case "cancel":
					s.cancel(o.bucket, o.key)
				case "consume":
					if got := s.consume(o.bucket, o.key); got != o.want {
						t.Errorf("op %d: consume(%q, %q) = %v, want %v", i, o.bucket, o.key, got, o.want)
					}
				default:
					t.Fatalf("op %d: unknown kind %q", i, o.kind)
				}
			}
			// Fully consumed keys are deleted, so the map does not grow
			// with every key the mount ever changed.
			if len(s.n) != tc.pending {
				t.Errorf("%d keys still counted (%v), want %d", len(s.n), s.n, tc.pending)
			}
			for k, n := range s.n {
				if n <= 0 {
					t.Errorf("key %q has count %d", k, n)
				}
			}
		})
	}
}

// Concurrent expects and consumes of one key balance out (run with -race).
func TestSelfEventsConcurrent(t *testing.T) {
	var s selfEvents
	s.init()
	const n = 100
	done := make(chan bool)
	for range n {
		go func() {
			s.expect("b", "k")
			done <- true
		}()
	}
	for range n {
		<-done
	}
	got := make(chan bool)
	for range n + 1 {
		go func() { got <- s.consume("b", "k") }()
	}
	trues := 0
	for range n + 1 {
		if <-got {
			trues++
		}
	}
	if trues != n {
		t.Errorf("%d consumes answered true, want %d", trues, n)
	}
	if len(s.n) != 0 {
		t.Errorf("keys left: %v", s.n)
	}
}
