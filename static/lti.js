// LTI pages' only script (the CSP allows no inline script).
// A deep-linking answer posts itself to the LMS; a finished Dynamic Registration
// tells the LMS's window to close its dialog (the IMS "org.imsglobal.lti.close" message).
"use strict";
(function () {
  var form = document.getElementById("lti-post");
  if (form) {
    form.submit();
  }
  if (document.getElementById("lti-registered")) {
    var target = window.opener || window.parent;
    if (target && target !== window) {
      target.postMessage({ subject: "org.imsglobal.lti.close" }, "*");
    }
  }
})();
