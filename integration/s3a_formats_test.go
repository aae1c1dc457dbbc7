package integration

import (
	"encoding/json"
	"fmt"
)

// ---------------------------------------------------------------------------
// Persistent formats (Jackson JSON of hadoop-aws commit/files).

// s3aIOStats is an IOStatisticsSnapshot.
type s3aIOStats struct {
	Counters       map[string]int64 `json:"counters"`
	Gauges         map[string]int64 `json:"gauges"`
	Minimums       map[string]int64 `json:"minimums"`
	Maximums       map[string]int64 `json:"maximums"`
	MeanStatistics map[string]struct {
		Samples int64 `json:"samples"`
		Sum     int64 `json:"sum"`
	} `json:"meanstatistics"`
}

func newS3AIOStats(counters map[string]int64) s3aIOStats {
	return s3aIOStats{Counters: counters, Gauges: map[string]int64{}, Minimums: map[string]int64{}, Maximums: map[string]int64{}}
}

// s3aPendingCommit is SinglePendingCommit (a .pending file, version 2).
type s3aPendingCommit struct {
	Version        int               `json:"version"`
	Filename       string            `json:"filename,omitempty"`
	URI            string            `json:"uri"`
	UploadID       string            `json:"uploadId"`
	Bucket         string            `json:"bucket"`
	DestinationKey string            `json:"destinationKey"`
	Created        int64             `json:"created"`
	Saved          int64             `json:"saved"`
	Date           string            `json:"date"`
	JobID          string            `json:"jobId"`
	TaskID         string            `json:"taskId"`
	Text           string            `json:"text"`
	Etags          []string          `json:"etags"`
	ExtraData      map[string]string `json:"extraData"`
	IOStatistics   s3aIOStats        `json:"iostatistics"`
	Length         int64             `json:"length"`
}

func (c *s3aPendingCommit) validate() error {
	if c.Version != 2 || c.Bucket == "" || c.DestinationKey == "" || c.UploadID == "" || c.Etags == nil || c.Length < 0 {
		return fmt.Errorf("invalid pending commit %+v (ValidationFailure)", *c)
	}
	return nil
}

// s3aPendingSet is PendingSet (a .pendingset file, version 3).
type s3aPendingSet struct {
	Version      int                `json:"version"`
	JobID        string             `json:"jobId"`
	Commits      []s3aPendingCommit `json:"commits"`
	ExtraData    map[string]string  `json:"extraData"`
	IOStatistics s3aIOStats         `json:"iostatistics"`
}

// s3aSuccessData is SuccessData, the JSON _SUCCESS of the S3A committers.
type s3aSuccessData struct {
	Name         string            `json:"name"`
	Timestamp    int64             `json:"timestamp"`
	Date         string            `json:"date"`
	Hostname     string            `json:"hostname"`
	Committer    string            `json:"committer"`
	Description  string            `json:"description"`
	JobID        string            `json:"jobId"`
	JobIDSource  string            `json:"jobIdSource"`
	Metrics      map[string]int64  `json:"metrics"`
	Diagnostics  map[string]string `json:"diagnostics"`
	Filenames    []string          `json:"filenames"`
	IOStatistics s3aIOStats        `json:"iostatistics"`
}

func s3aJSON(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return b
}
