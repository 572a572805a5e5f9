"""web_view as a node: optional viser, --help, the targets it publishes."""

import subprocess
import sys

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import PointStamped, PoseStamped
import pytest
from rclpy.qos import DurabilityPolicy
from std_srvs.srv import SetBool

from fabrik_ros.nodes.web_view_node import WebViewNode
from test.nodes.conftest import ARM_CONFIG, REPO_ROOT

pytestmark = [pytest.mark.ros, pytest.mark.timeout(60)]

# Run Python with viser and yourdfpy made unimportable, as on a robot without them.
_WITHOUT_VISER = ("import sys; sys.modules['viser'] = sys.modules['yourdfpy'] = None; ")


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, '-c', _WITHOUT_VISER + code], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=60)


def test_web_view_without_viser_says_how_to_install_it_in_one_line_and_exits_1():
    run = _python('from fabrik_ros.nodes.web_view_node import main; '
                  f"main(['web_view', '--ros-args', '--params-file', '{ARM_CONFIG}'])")
    assert run.returncode == 1
    assert run.stderr.splitlines() == [
        'web_view needs viser and yourdfpy: pip install viser yourdfpy (viser is missing)']


def test_the_other_nodes_and_the_pure_webview_package_never_need_viser():
    run = _python('import fabrik_ros.nodes.ik_node, fabrik_ros.nodes.driver_node, '
                  'fabrik_ros.nodes.arm_composition, fabrik_ros.webview.pipeline, '
                  'fabrik_ros.nodes.web_view_node, fabrik_ros.webview; print("imported")')
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == 'imported'


def test_web_view_answers_help(capsys):
    from fabrik_ros.nodes.web_view_node import main
    main(['web_view', '--help'])
    assert 'pip install viser yourdfpy' in capsys.readouterr().out


@pytest.mark.parametrize('orientation', [False, True])
def test_a_page_target_goes_out_as_target_point_or_with_orientation_as_target_pose(
        ros, arm_args, orientation):
    node = ros.add(WebViewNode(context=ros.context, cli_args=[
        *arm_args, '-p', 'port:=0', '-p', f'use_pose_orientation:={str(orientation).lower()}']))
    received = []
    probe = ros.probe()
    topic, kind = ('target_pose', PoseStamped) if orientation else ('target_point', PointStamped)
    probe.create_subscription(kind, topic, received.append, 10)
    wxyz = (0.7071067811865476, 0.0, 0.7071067811865476, 0.0)
    ros.spin_until(lambda: received, timeout_s=10.0, what=f'a {topic}',
                   during=lambda: node.send_target((0.15, -0.02, 0.1), wxyz))
    message = received[-1]
    assert message.header.frame_id == 'base_link'
    if orientation:
        o = message.pose.orientation
        assert (message.pose.position.x, (o.w, o.x, o.y, o.z)) == (0.15, wxyz)
    else:
        assert (message.point.x, message.point.y, message.point.z) == (0.15, -0.02, 0.1)


def test_the_attach_box_follows_what_the_driver_reports(ros, arm_args):
    node = ros.add(WebViewNode(context=ros.context, cli_args=[*arm_args, '-p', 'port:=0']))
    publisher = ros.probe().create_publisher(DiagnosticArray, '/diagnostics', 10)
    driver = f'{ros.namespace.lstrip("/")}/servo_driver: servo board'

    def report(enabled: str) -> None:
        status = DiagnosticStatus(name=driver, message='connected',
                                  values=[KeyValue(key='enabled', value=enabled)])
        publisher.publish(DiagnosticArray(status=[status]))

    assert node.page.attached
    ros.spin_until(lambda: not node.page.attached, timeout_s=10.0,
                   what='the box cleared by a detached driver', during=lambda: report('False'))
    ros.spin_until(lambda: node.page.attached, timeout_s=10.0,
                   what='the box ticked again', during=lambda: report('True'))


def test_a_slider_range_that_is_no_range_stops_web_view_with_one_line(capfd):
    from fabrik_ros.nodes.web_view_node import main
    with pytest.raises(SystemExit) as exited:
        main(['web_view', '--ros-args', '--params-file', str(ARM_CONFIG),
              '-p', 'jog_range_us:=[2500.0, 500.0]'])
    assert exited.value.code == 1
    assert 'jog_range_us = [2500.0, 500.0], must be two pulse widths' in capfd.readouterr().err


@pytest.mark.parametrize('accepted', [True, False])
def test_a_report_older_than_the_users_click_does_not_flip_the_attach_box_back(
        ros, arm_args, accepted):
    node = ros.add(WebViewNode(context=ros.context, cli_args=[*arm_args, '-p', 'port:=0']))
    probe = ros.probe()
    publisher = probe.create_publisher(DiagnosticArray, '/diagnostics', 10)
    requests = []

    def driver_enable(request, response):
        requests.append(request.data)
        response.success, response.message = accepted, 'servos detached' if accepted else 'no'
        return response

    probe.create_service(SetBool, 'servo_driver/enable', driver_enable)
    shown = []
    show_status = node.page.show_status
    node.page.show_status = lambda markdown: (shown.append(markdown), show_status(markdown))
    replies = []
    show_reply = node.page.show_reply
    node.page.show_reply = lambda text: (replies.append(text), show_reply(text))
    name = f'{ros.namespace.lstrip("/")}/servo_driver: servo board'

    def report(enabled: str, message: str) -> None:
        ros.spin_until(lambda: any(message in text for text in shown), timeout_s=10.0,
                       what=f'the report {message!r}', during=lambda: publisher.publish(
                           DiagnosticArray(status=[DiagnosticStatus(
                               name=name, message=message,
                               values=[KeyValue(key='enabled', value=enabled)])])))

    ros.spin_until(node._enable.service_is_ready, timeout_s=10.0, what='~/enable')
    node.page.show_attached(False)          # what the user's click does to the box
    node.enable(False)
    report('True', 'published before the driver took it')
    assert not node.page.attached
    ros.spin_until(lambda: replies, timeout_s=10.0, what="the driver's answer")
    assert requests == [False]
    report('True', 'after the answer')
    assert node.page.attached is not accepted   # refused: the driver's state shows again
    report('False', 'detached')
    assert not node.page.attached
    report('True', 'attached by someone else')
    assert node.page.attached


def test_the_page_colours_the_solution_by_what_fabrik_ik_says_it_reached(ros, arm_args):
    from fabrik_ros.nodes.ik_node import FabrikIkNode
    web = ros.add(WebViewNode(context=ros.context, cli_args=[*arm_args, '-p', 'port:=0']))
    ros.add(FabrikIkNode(context=ros.context, cli_args=arm_args))
    shown = []
    show_solution = web.page.show_solution
    web.page.show_solution = lambda chain, target: (shown.append(target),
                                                    show_solution(chain, target))
    for position, reached in (((0.0, 0.0, 2.0), False), ((0.12, 0.0, 0.12), True)):
        ros.spin_until(lambda p=position, r=reached: (
                           web.page.reached is r and shown
                           and max(abs(a - b) for a, b in zip(shown[-1], p, strict=True)) < 1e-9),
                       timeout_s=15.0, what=f'the page to show {position} reached={reached}',
                       during=lambda p=position: web.send_target(p, (1.0, 0.0, 0.0, 0.0)))


def test_a_page_target_is_not_replayed_to_a_subscriber_that_comes_later(ros, arm_args):
    node = ros.add(WebViewNode(context=ros.context, cli_args=[*arm_args, '-p', 'port:=0']))
    early = []
    probe = ros.probe()
    probe.create_subscription(PointStamped, 'target_point', early.append, 10)
    ros.spin_until(lambda: early, timeout_s=10.0, what='the stale target to go out',
                   during=lambda: node.send_target((0.1, 0.0, 0.1), (1.0, 0.0, 0.0, 0.0)))
    # A subscriber that comes now (a fabrik_ik started later) gets only the target sent after
    # it came; and the publisher keeps none for anyone (not even one asking for latched ones).
    late = []
    ros.probe('late').create_subscription(PointStamped, 'target_point', late.append, 1)
    ros.spin_until(lambda: node._point.get_subscription_count() >= 2, timeout_s=10.0,
                   what='the late subscriber to be matched')
    ros.spin_until(lambda: late, timeout_s=10.0, what='the fresh target',
                   during=lambda: node.send_target((0.2, 0.0, 0.1), (1.0, 0.0, 0.0, 0.0)))
    assert {m.point.x for m in late} == {0.2}
    assert node._point.qos_profile.durability == DurabilityPolicy.VOLATILE
    assert node._pose.qos_profile.durability == DurabilityPolicy.VOLATILE


def test_in_a_namespace_the_status_box_shows_that_arms_nodes_only(ros, arm_args):
    # Two arms publish on the one /diagnostics; the harness runs every node in a namespace.
    node = ros.add(WebViewNode(context=ros.context, cli_args=[*arm_args, '-p', 'port:=0']))
    publisher = ros.probe().create_publisher(DiagnosticArray, '/diagnostics', 10)
    own = DiagnosticStatus(name=f'{ros.namespace.lstrip("/")}/servo_driver: servo board',
                           message='this arm')
    other = DiagnosticStatus(name='other_arm/servo_driver: servo board', message='other arm')
    array = DiagnosticArray(status=[other, own])
    ros.spin_until(lambda: 'this arm' in node._statuses.markdown(), timeout_s=10.0,
                   what="this arm's status shown", during=lambda: publisher.publish(array))
    assert 'other arm' not in node._statuses.markdown()
