// The sandbox's files: the kit's upload box and file manager, under the page's CairnProvider.
// They share the folder shown: an upload goes there, and the file manager shows it at once.

import { CairnFileManager } from "../../../components/file-manager/index.js";
import { CairnUpload, signedUrlUploader } from "../../../components/upload/index.js";

export function SandboxFiles() {
  return (
    <div className="sbx-files">
      {/* The kit's default upload is an XMLHttpRequest with the connection's headers, which
            has no CSRF token for the cookie; a signed URL per file (asked for through
            dashboardFetch) is its own permission, and the upload still shows progress. */}
      <CairnUpload uploader={signedUrlUploader} />
      <CairnFileManager className="sbx-file-manager" />
    </div>
  );
}
