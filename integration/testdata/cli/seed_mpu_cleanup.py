# The boto3 snippets of ../shared/seeds/002_cfbb51767713d168.txt (an S3A
# committer explainer), verbatim. The seed's copy lost its indentation; it is
# restored here, nothing else is changed. s3_cli_boto3_test.go runs this file with
# exec() after pointing boto3.client at the test server, creating the bucket
# my-data-lake and two incomplete multipart uploads in it.

# Через boto3:
import boto3
s3 = boto3.client("s3")
s3.put_bucket_lifecycle_configuration(
    Bucket="my-data-lake",
    LifecycleConfiguration={
        "Rules": [{
            "ID": "abort-incomplete-mpu",
            "Status": "Enabled",
            "Filter": {"Prefix": ""},
            "AbortIncompleteMultipartUpload": {
                "DaysAfterInitiation": 3
            }
        }]
    }
)

# Проверка незавершённых MPU:
import boto3
s3 = boto3.client("s3")
response = s3.list_multipart_uploads(Bucket="my-data-lake")
if "Uploads" in response:
    for upload in response["Uploads"]:
        print(
            f"Key: {upload['Key']}, "
            f"UploadId: {upload['UploadId']}, "
            f"Initiated: {upload['Initiated']}"
        )
    print(f"Всего незавершённых MPU: {len(response['Uploads'])}")
def abort_old_multipart_uploads(bucket: str, days_old: int = 3) -> int:
    """Принудительно отменить все MPU старше N дней."""
    from datetime import datetime, timezone, timedelta
    s3 = boto3.client("s3")
    cutoff = datetime.now(timezone.utc) - timedelta(days=days_old)
    aborted = 0
    paginator = s3.get_paginator("list_multipart_uploads")
    for page in paginator.paginate(Bucket=bucket):
        for upload in page.get("Uploads", []):
            if upload["Initiated"] < cutoff:
                s3.abort_multipart_upload(
                    Bucket=bucket,
                    Key=upload["Key"],
                    UploadId=upload["UploadId"]
                )
                aborted += 1
    return aborted
