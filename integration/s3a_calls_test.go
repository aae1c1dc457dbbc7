package integration

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// s3aCheckCalls compares the recorded requests of task 0's commit (and,
// for the S3A committers, of job commit) with what Hadoop sends.
func s3aCheckCalls(t *testing.T, rec *s3aRecorder, scope string, c s3aCommitter, plan s3aPlan) {
	t.Helper()
	j := c.job()
	a := j.newAttempt(0, 0)
	subst := map[string]string{j.uuid: "U", a.id: "A", a.taskID: "TK", s3aDest: "D"}
	var rels []string
	for _, f := range plan.files(0) {
		rels = append(rels, f.rel)
	}
	sort.Strings(rels)
	relU := func(r string) string { return strings.ReplaceAll(r, j.uuid, "U") }
	var want []string
	got := s3aRender(rec.phase(scope+"commitTask "+a.id), subst)
	tail := 0 // trailing requests that depend on the other tasks' timing
	switch m := c.(type) {
	case *s3aMagic:
		subst[m.taskPath(a)] = "T"
		subst[m.jobPath()] = "J"
		got = s3aRender(rec.phase(scope+"commitTask "+a.id), subst)
		want = append(want, "ListObjectsV2 T/__base/ 200")
		for _, r := range rels {
			want = append(want, "GetObject T/__base/"+relU(r)+".pending 200")
		}
		want = append(want, "PutObject J/TK.pendingset 200", "HeadObject T 404", "ListObjectsV2 T/ 200", "ListObjectsV2 T/ 200", "DeleteObjects 200")
		var w []string
		for _, r := range plan.files(0) {
			w = append(w, "CreateMultipartUpload D/"+relU(r.rel)+" 200", "UploadPart D/"+relU(r.rel)+" 200",
				"PutObject T/__base/"+relU(r.rel)+" 200", "PutObject T/__base/"+relU(r.rel)+".pending 200")
		}
		s3aCompare(t, "magic write "+a.id, s3aRender(rec.phase(scope+"write "+a.id), subst), w, 0)
	case *s3aStaging:
		if m.partitioned && m.mode == s3aFail {
			want = append(want, "HeadObject D/date=2026-11-27 404", "ListObjectsV2 D/date=2026-11-27/ 200",
				"HeadObject D/date=2026-11-28 404", "ListObjectsV2 D/date=2026-11-28/ 200")
		}
		for _, r := range rels {
			want = append(want, "CreateMultipartUpload D/"+relU(r)+" 200", "UploadPart D/"+relU(r)+" 200")
		}
	case *s3aFOC:
		if m.version == 2 {
			t.Logf("FileOutputCommitter v2 commitTask %s (%d requests):\n%s", a.id, len(got), strings.Join(got, "\n"))
			return
		}
		subst[m.taskAttempt(a)] = "TA"
		subst[m.committedTask(a)] = "CT"
		got = s3aRender(rec.phase(scope+"commitTask "+a.id), subst)
		want = append(want, "HeadObject TA 404", "ListObjectsV2 TA/ 200", // getFileStatus(attempt)
			"HeadObject CT 404", "ListObjectsV2 CT/ 200", // exists(committed task)
			"HeadObject TA 404", "ListObjectsV2 TA/ 200", // rename: source
			"HeadObject CT 404", "ListObjectsV2 CT/ 200", // rename: destination
			"HeadObject D/_temporary/0 404", // rename: destination's parent
			"ListObjectsV2 TA/ 200")         // rename: list the source
		for _, r := range rels {
			want = append(want, "CopyObject CT/"+relU(r)+" 200")
		}
		want = append(want, "DeleteObjects 200", "ListObjectsV2 D/_temporary/0/_temporary/ 200")
		tail = 1 // PUT D/_temporary/0/_temporary/ if no other attempt is left
	}
	s3aCompare(t, "commitTask "+a.id, got, want, tail)

	// Job commit, from the first Complete on (the staging committers'
	// conflict handling comes before).
	m, isMagic := c.(*s3aMagic)
	s, isStaging := c.(*s3aStaging)
	if !isMagic && !isStaging {
		return
	}
	if isMagic {
		subst[m.jobPath()] = "J"
		subst[m.magicRoot()] = "M"
	}
	jc := s3aRender(rec.phase(scope+"commitJob"), subst)
	first := len(jc)
	for i, l := range jc {
		if strings.HasPrefix(l, "CompleteMultipartUpload ") {
			first = i
			break
		}
	}
	want = nil
	if isMagic {
		want = append(want, "ListObjectsV2 J/ 200")
		for task := range plan.tasks {
			tk := "TK"
			if task > 0 {
				tk = j.newAttempt(task, 0).taskID
			}
			want = append(want, "GetObject J/"+tk+".pendingset 200")
		}
		if d := s3aDiffOrdered(jc[:first], want); d != "" {
			t.Errorf("magic commitJob: %s\ngot:\n%s", d, strings.Join(jc, "\n"))
		}
	} else if s.mode == s3aReplace {
		t.Logf("%s/%s commitJob conflict resolution:\n%s", s.name(), s.mode, strings.Join(jc[:first], "\n"))
	}
	want = nil
	for task := range plan.tasks {
		var rs []string
		for _, f := range plan.files(task) {
			rs = append(rs, f.rel)
		}
		sort.Strings(rs)
		for _, r := range rs {
			want = append(want, "CompleteMultipartUpload D/"+relU(r)+" 200")
		}
	}
	want = append(want, "ListObjectsV2 D/_SUCCESS/ 200", "PutObject D/_SUCCESS 200")
	if isMagic {
		crashed := plan.files(plan.crashTask)[2].rel
		want = append(want, "ListMultipartUploads D/ 200", "AbortMultipartUpload D/"+relU(crashed)+" 204",
			"HeadObject M 404", "ListObjectsV2 M/ 200", "ListObjectsV2 M/ 200", "DeleteObjects 200", "ListObjectsV2 D/ 200",
			"HeadObject D/__temp-data 404", "ListObjectsV2 D/__temp-data/ 200")
	} else {
		want = append(want, "HeadObject D/_temporary 404", "ListObjectsV2 D/_temporary/ 200", "ListMultipartUploads D/ 200")
	}
	s3aCompare(t, "commitJob (from the first Complete)", jc[first:], want, 0)
}

func s3aDiffOrdered(got, want []string) string {
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			return fmt.Sprintf("missing request %d: %s", i, want[i])
		case i >= len(want):
			return fmt.Sprintf("extra request %d: %s", i, got[i])
		case got[i] != want[i]:
			return fmt.Sprintf("request %d is %q, want %q", i, got[i], want[i])
		}
	}
	return ""
}

// s3aCompare checks got == want, allowing up to tail extra requests at
// the end.
func s3aCompare(t *testing.T, what string, got, want []string, tail int) {
	t.Helper()
	g := got
	if len(g) > len(want) && len(g)-len(want) <= tail {
		g = g[:len(want)]
	}
	if d := s3aDiffOrdered(g, want); d != "" {
		t.Errorf("%s: %s\ngot:\n%s\nwant:\n%s", what, d, strings.Join(got, "\n"), strings.Join(want, "\n"))
		return
	}
	t.Logf("%s (%d requests):\n%s", what, len(got), strings.Join(got, "\n"))
}
