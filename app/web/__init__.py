"""The server-rendered pages: one router gathering each resource's. (The top-level web/ is
not Python: the editor bundle's JavaScript source, built into static/editor.js.)"""

from fastapi import APIRouter

from app.web import (
    account,
    api_docs,
    auth,
    authoring,
    client_download,
    course_grading,
    course_grading_view,
    course_insights,
    course_people,
    course_problem_folders,
    course_problems,
    course_rubrics,
    course_similarity,
    courses,
    email_verification,
    guides,
    lti,
    lti_admin,
    lti_pickers,
    mail_admin,
    notifications,
    operations,
    password_reset,
    problems,
    saml,
    sso_oidc,
)

router = APIRouter()
for part in (
    auth.router,
    password_reset.router,
    email_verification.router,
    problems.router,
    account.router,
    notifications.router,
    client_download.router,
    courses.router,
    course_insights.router,
    course_people.router,
    course_problem_folders.router,
    course_grading.router,
    course_grading_view.router,
    course_rubrics.router,
    course_similarity.router,
    course_problems.router,
    authoring.router,
    operations.router,
    lti.router,
    lti_pickers.router,
    lti_admin.router,
    mail_admin.router,
    api_docs.router,
    guides.router,
    saml.router,
    sso_oidc.router,
):
    router.include_router(part)
