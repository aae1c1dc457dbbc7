package integration

import (
	"fmt"
	"sort"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

func sdkVersioning(t *testing.T, srv *server, c *s3.Client, bucket string) {
	if _, err := c.PutBucketVersioning(callCtx(t), &s3.PutBucketVersioningInput{Bucket: &bucket,
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatalf("PutBucketVersioning: %v", err)
	}
	gv, err := c.GetBucketVersioning(callCtx(t), &s3.GetBucketVersioningInput{Bucket: &bucket})
	if err != nil || gv.Status != types.BucketVersioningStatusEnabled {
		t.Fatalf("GetBucketVersioning: %v, %q", err, gv.Status)
	}

	key := "doc.txt"
	var ids []string
	for i := range 3 {
		out := sdkPut(t, c, bucket, key, []byte(fmt.Sprintf("version %d", i)))
		if aws.ToString(out.VersionId) == "" || aws.ToString(out.VersionId) == "null" {
			t.Fatalf("PutObject %d: version id %q", i, aws.ToString(out.VersionId))
		}
		ids = append(ids, aws.ToString(out.VersionId))
	}
	for i, id := range ids {
		if got := string(sdkGet(t, c, bucket, key, id)); got != fmt.Sprintf("version %d", i) {
			t.Errorf("GetObject version %d: %q", i, got)
		}
	}
	if got := string(sdkGet(t, c, bucket, key, "")); got != "version 2" {
		t.Errorf("GetObject latest: %q", got)
	}

	del, err := c.DeleteObject(callCtx(t), &s3.DeleteObjectInput{Bucket: &bucket, Key: &key})
	if err != nil || !aws.ToBool(del.DeleteMarker) || aws.ToString(del.VersionId) == "" {
		t.Fatalf("DeleteObject: %v, marker %v version %q", err, aws.ToBool(del.DeleteMarker), aws.ToString(del.VersionId))
	}
	marker := aws.ToString(del.VersionId)
	_, err = c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	wantAPIError(t, "GetObject behind a delete marker", err, "NoSuchKey", 404)
	_, err = c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: &key, VersionId: &marker})
	wantAPIError(t, "GetObject of the delete marker", err, "MethodNotAllowed", 405)
	if got := string(sdkGet(t, c, bucket, key, ids[1])); got != "version 1" {
		t.Errorf("GetObject old version behind a marker: %q", got)
	}

	lv, err := c.ListObjectVersions(callCtx(t), &s3.ListObjectVersionsInput{Bucket: &bucket})
	if err != nil {
		t.Fatalf("ListObjectVersions: %v", err)
	}
	if len(lv.DeleteMarkers) != 1 || aws.ToString(lv.DeleteMarkers[0].VersionId) != marker || !aws.ToBool(lv.DeleteMarkers[0].IsLatest) {
		t.Errorf("ListObjectVersions delete markers: %+v", lv.DeleteMarkers)
	}
	var listed []string
	for _, v := range lv.Versions {
		listed = append(listed, aws.ToString(v.VersionId))
		if aws.ToBool(v.IsLatest) {
			t.Errorf("version %s is latest behind a delete marker", aws.ToString(v.VersionId))
		}
	}
	if want := []string{ids[2], ids[1], ids[0]}; fmt.Sprint(listed) != fmt.Sprint(want) {
		t.Errorf("ListObjectVersions versions %v, want newest first %v", listed, want)
	}
	lv, err = c.ListObjectVersions(callCtx(t), &s3.ListObjectVersionsInput{Bucket: &bucket, MaxKeys: aws.Int32(2)})
	if err != nil || !aws.ToBool(lv.IsTruncated) || len(lv.Versions)+len(lv.DeleteMarkers) != 2 {
		t.Fatalf("ListObjectVersions max 2: %v, truncated %v, %d entries", err, aws.ToBool(lv.IsTruncated), len(lv.Versions)+len(lv.DeleteMarkers))
	}
	lv, err = c.ListObjectVersions(callCtx(t), &s3.ListObjectVersionsInput{Bucket: &bucket, KeyMarker: lv.NextKeyMarker, VersionIdMarker: lv.NextVersionIdMarker})
	if err != nil || aws.ToBool(lv.IsTruncated) || len(lv.Versions) != 2 || aws.ToString(lv.Versions[1].VersionId) != ids[0] {
		t.Fatalf("ListObjectVersions second page: %v, %d versions", err, len(lv.Versions))
	}

	// Removing the delete marker brings the object back.
	if _, err := c.DeleteObject(callCtx(t), &s3.DeleteObjectInput{Bucket: &bucket, Key: &key, VersionId: &marker}); err != nil {
		t.Fatalf("DeleteObject marker: %v", err)
	}
	if got := string(sdkGet(t, c, bucket, key, "")); got != "version 2" {
		t.Errorf("GetObject after removing the marker: %q", got)
	}
	// Deleting a version by id removes it for good.
	dv, err := c.DeleteObject(callCtx(t), &s3.DeleteObjectInput{Bucket: &bucket, Key: &key, VersionId: &ids[2]})
	if err != nil || aws.ToString(dv.VersionId) != ids[2] || aws.ToBool(dv.DeleteMarker) {
		t.Fatalf("DeleteObject version: %v, version %q marker %v", err, aws.ToString(dv.VersionId), aws.ToBool(dv.DeleteMarker))
	}
	if got := string(sdkGet(t, c, bucket, key, "")); got != "version 1" {
		t.Errorf("GetObject after deleting the newest version: %q", got)
	}
	_, err = c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: &key, VersionId: &ids[2]})
	wantAPIError(t, "GetObject deleted version", err, "NoSuchVersion", 404)

	// DeleteObjects in a versioned bucket: a marker for a key, a version
	// removed for a key and version id.
	other := sdkPut(t, c, bucket, "other", []byte("o"))
	dm, err := c.DeleteObjects(callCtx(t), &s3.DeleteObjectsInput{Bucket: &bucket, Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("other")}, {Key: aws.String("other"), VersionId: other.VersionId}}}})
	if err != nil || len(dm.Errors) != 0 || len(dm.Deleted) != 2 {
		t.Fatalf("DeleteObjects versioned: %v, %+v", err, dm)
	}
	for _, d := range dm.Deleted {
		switch aws.ToString(d.VersionId) {
		case "":
			if !aws.ToBool(d.DeleteMarker) || aws.ToString(d.DeleteMarkerVersionId) == "" {
				t.Errorf("DeleteObjects key only: marker %v marker version %q", aws.ToBool(d.DeleteMarker), aws.ToString(d.DeleteMarkerVersionId))
			}
		case aws.ToString(other.VersionId):
			if aws.ToBool(d.DeleteMarker) {
				t.Errorf("DeleteObjects of a version reports a delete marker")
			}
		default:
			t.Errorf("DeleteObjects reported version %q", aws.ToString(d.VersionId))
		}
	}
	lv, err = c.ListObjectVersions(callCtx(t), &s3.ListObjectVersionsInput{Bucket: &bucket, Prefix: aws.String("other")})
	if err != nil || len(lv.Versions) != 0 || len(lv.DeleteMarkers) != 1 {
		t.Fatalf("ListObjectVersions other: %v, %d versions %d markers", err, len(lv.Versions), len(lv.DeleteMarkers))
	}
	lv, err = c.ListObjectVersions(callCtx(t), &s3.ListObjectVersionsInput{Bucket: &bucket, Prefix: &key})
	if err != nil || len(lv.Versions) != 2 || len(lv.DeleteMarkers) != 0 || !aws.ToBool(lv.Versions[0].IsLatest) {
		t.Fatalf("ListObjectVersions at the end: %v, %d versions, %d markers", err, len(lv.Versions), len(lv.DeleteMarkers))
	}
}

func sdkDeleteObjects(t *testing.T, srv *server, c *s3.Client, bucket string) {
	for _, quiet := range []bool{false, true} {
		t.Run(fmt.Sprintf("quiet=%v", quiet), func(t *testing.T) {
			prefix := fmt.Sprintf("q%v/", quiet)
			var ids []types.ObjectIdentifier
			for i := range 5 {
				k := fmt.Sprintf("%sk%d", prefix, i)
				sdkPut(t, c, bucket, k, []byte(k))
				ids = append(ids, types.ObjectIdentifier{Key: aws.String(k)})
			}
			ids = append(ids, types.ObjectIdentifier{Key: aws.String(prefix + "never-existed")})
			out, err := c.DeleteObjects(callCtx(t), &s3.DeleteObjectsInput{Bucket: &bucket,
				Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(quiet)}})
			if err != nil {
				t.Fatalf("DeleteObjects: %v", err)
			}
			if len(out.Errors) != 0 {
				t.Fatalf("DeleteObjects errors: %+v", out.Errors)
			}
			var deleted []string
			for _, d := range out.Deleted {
				deleted = append(deleted, aws.ToString(d.Key))
			}
			sort.Strings(deleted)
			if quiet && len(deleted) != 0 {
				t.Errorf("quiet DeleteObjects reported %v", deleted)
			}
			if !quiet && len(deleted) != len(ids) {
				t.Errorf("verbose DeleteObjects reported %v, want all %d keys", deleted, len(ids))
			}
			lo, err := c.ListObjectsV2(callCtx(t), &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: &prefix})
			if err != nil || len(lo.Contents) != 0 {
				t.Fatalf("ListObjectsV2 after DeleteObjects: %v, %d keys", err, len(lo.Contents))
			}
		})
	}
}
