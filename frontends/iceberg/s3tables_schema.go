package iceberg

import (
	"encoding/json"
	"math"
	"strings"
)

// CreateTable's body and its conversion to the Iceberg REST
// CreateTableRequest the catalog takes. S3 Tables' metadata.iceberg is
// Iceberg's JSON already, but for schema: its fields are
// {id?, name, type, required?} with a primitive type's name. schemaV2,
// partitionSpec and writeOrder are Iceberg's Schema, PartitionSpec and
// SortOrder as the spec writes them and pass through; the catalog
// validates all of it.

// s3tCreateTableRequest is CreateTableRequest's body.
type s3tCreateTableRequest struct {
	Name                      string            `json:"name"`
	Format                    string            `json:"format"`
	Metadata                  *s3tTableMetadata `json:"metadata"`
	EncryptionConfiguration   json.RawMessage   `json:"encryptionConfiguration"`
	StorageClassConfiguration *s3tStorageClass  `json:"storageClassConfiguration"`
	Tags                      map[string]string `json:"tags"`
}

// s3tTableMetadata is TableMetadata (a union with one member).
type s3tTableMetadata struct {
	Iceberg *s3tIcebergMetadata `json:"iceberg"`
}

// s3tIcebergMetadata is IcebergMetadata.
type s3tIcebergMetadata struct {
	Schema        *s3tSchema        `json:"schema"`
	SchemaV2      json.RawMessage   `json:"schemaV2"`
	PartitionSpec json.RawMessage   `json:"partitionSpec"`
	WriteOrder    json.RawMessage   `json:"writeOrder"`
	Properties    map[string]string `json:"properties"`
}

// s3tSchema is IcebergSchema.
type s3tSchema struct {
	Fields []s3tSchemaField `json:"fields"`
}

// s3tSchemaField is SchemaField.
type s3tSchemaField struct {
	ID       *int   `json:"id"`
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required *bool  `json:"required"`
}

// icebergCreate is the Iceberg REST CreateTableRequest.
type icebergCreate struct {
	Name          string            `json:"name"`
	Schema        json.RawMessage   `json:"schema"`
	PartitionSpec json.RawMessage   `json:"partition-spec,omitempty"`
	WriteOrder    json.RawMessage   `json:"write-order,omitempty"`
	Properties    map[string]string `json:"properties,omitempty"`
}

// icebergField is a field of an Iceberg schema.
type icebergField struct {
	ID       int    `json:"id"`
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
}

// icebergSchema is an Iceberg struct schema of primitive fields.
type icebergSchema struct {
	Type     string         `json:"type"`
	SchemaID int            `json:"schema-id"`
	Fields   []icebergField `json:"fields"`
}

// icebergCreateBody converts a CreateTable body to the Iceberg REST
// CreateTableRequest and returns the table's name with it. A table
// without metadata gets an empty schema. Errors are 400s.
func icebergCreateBody(body []byte) (string, []byte, error) {
	var in s3tCreateTableRequest
	if err := s3tDecode(body, &in); err != nil {
		return "", nil, err
	}
	switch {
	case in.Name == "":
		return "", nil, badRequest("name is required: the table's name")
	case in.Format == "":
		return "", nil, badRequest("format is required: ICEBERG")
	case !strings.EqualFold(in.Format, s3tIceberg):
		return "", nil, badRequest("format %q is not supported: give ICEBERG", clipQuoted(in.Format))
	}
	if err := checkBucketOptions(in.EncryptionConfiguration, in.StorageClassConfiguration, in.Tags); err != nil {
		return "", nil, err
	}
	out := icebergCreate{Name: in.Name}
	var md s3tIcebergMetadata
	if in.Metadata != nil && in.Metadata.Iceberg != nil {
		md = *in.Metadata.Iceberg
	}
	schema, err := md.icebergSchema()
	if err != nil {
		return "", nil, err
	}
	out.Schema = schema
	for _, m := range []struct {
		name string
		raw  json.RawMessage
		dst  *json.RawMessage
	}{{"partitionSpec", md.PartitionSpec, &out.PartitionSpec}, {"writeOrder", md.WriteOrder, &out.WriteOrder}} {
		if !jsonPresent(m.raw) {
			continue
		}
		if !jsonObject(m.raw) {
			return "", nil, badRequest("metadata.iceberg.%s must be a JSON object", m.name)
		}
		*m.dst = m.raw
	}
	out.Properties = md.Properties
	raw, err := json.Marshal(out)
	if err != nil {
		return "", nil, badRequest("encoding the table's request: %v", err)
	}
	return in.Name, raw, nil
}

// icebergSchema is the Iceberg schema of the metadata: schemaV2 as it
// is, schema converted, or an empty one.
func (md s3tIcebergMetadata) icebergSchema() (json.RawMessage, error) {
	switch {
	case md.Schema != nil && jsonPresent(md.SchemaV2):
		return nil, badRequest("give metadata.iceberg.schema or metadata.iceberg.schemaV2, not both")
	case jsonPresent(md.SchemaV2):
		var s struct {
			Type   string            `json:"type"`
			Fields []json.RawMessage `json:"fields"`
		}
		if err := json.Unmarshal(md.SchemaV2, &s); err != nil || s.Type != "struct" {
			return nil, badRequest(`metadata.iceberg.schemaV2 must be an Iceberg schema: {"type": "struct", "fields": [...]}`)
		}
		return md.SchemaV2, nil
	}
	var fields []s3tSchemaField
	if md.Schema != nil {
		fields = md.Schema.Fields
	}
	out := icebergSchema{Type: "struct", Fields: []icebergField{}}
	next := 1 // ids not given follow the largest given
	for i, f := range fields {
		if f.ID == nil {
			continue
		}
		if *f.ID < 1 || *f.ID > math.MaxInt32 {
			return nil, badRequest("metadata.iceberg.schema.fields[%d]: id %d: give a number from 1 to %d, or none", i, *f.ID, math.MaxInt32)
		}
		next = max(next, *f.ID+1)
	}
	for i, f := range fields {
		typ := strings.ToLower(strings.TrimSpace(f.Type))
		switch {
		case f.Name == "":
			return nil, badRequest("metadata.iceberg.schema.fields[%d]: name is required", i)
		case typ == "":
			return nil, badRequest("metadata.iceberg.schema.fields[%d] (%s): type is required, an Iceberg primitive type such as int, long, string or decimal(10,2)", i, clipQuoted(f.Name))
		case strings.ContainsAny(typ, "<{"):
			return nil, badRequest("metadata.iceberg.schema.fields[%d] (%s): type %q is not an Iceberg primitive type: give nested types in metadata.iceberg.schemaV2", i, clipQuoted(f.Name), clipQuoted(f.Type))
		}
		id := next
		if f.ID != nil {
			id = *f.ID
		} else {
			next++
		}
		out.Fields = append(out.Fields, icebergField{ID: id, Name: f.Name, Type: typ, Required: f.Required != nil && *f.Required})
	}
	return json.Marshal(out)
}

// jsonObject reports whether raw is a JSON object.
func jsonObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}
